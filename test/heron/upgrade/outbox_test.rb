# frozen_string_literal: true

require "test_helper"

# The queue of writes a socket did not take: over a real socket pair, sent whole and in order
# once the peer reads, bounded, and given up on when the peer does not read.
class UpgradeOutboxTest < Minitest::Test
  CHUNK = ("x" * 256 * 1024).b

  def setup
    @ours, @theirs = UNIXSocket.pair
  end

  def teardown
    [@ours, @theirs].each(&:close)
  end

  # Pushes `chunks` and flushes them within `timeout`; the flush's results once Sync ends.
  def flush(outbox, chunks, timeout)
    results = []
    Sync do |task|
      assert(chunks.all? { |chunk| outbox.push(chunk) })
      outbox.flush_in_background(timeout) { |done| results << done }
      yield task if block_given?
    end
    results
  end

  def test_queued_writes_go_out_in_order_once_the_peer_reads
    outbox = Heron::Upgrade::Outbox.new(@ours, 4 * CHUNK.bytesize)
    chunks = %w[0 1 2].map { |digit| CHUNK.tr("x", digit) }
    results = flush(outbox, chunks, 5) do |task|
      assert_equal chunks.join, task.async { @theirs.read(3 * CHUNK.bytesize) }.wait
    end
    assert_equal [true], results
    assert_equal [0, 0], [outbox.bytes, outbox.size]
  end

  def test_a_write_past_the_limit_is_refused
    outbox = Heron::Upgrade::Outbox.new(@ours, CHUNK.bytesize + 10)
    assert outbox.push(CHUNK)
    refute outbox.push("more than ten bytes")
    assert_equal [CHUNK.bytesize, 1], [outbox.bytes, outbox.size]
  end

  def test_a_peer_that_does_not_read_fails_the_flush_after_the_timeout
    outbox = Heron::Upgrade::Outbox.new(@ours, 64 * CHUNK.bytesize)
    assert_equal [false], flush(outbox, [CHUNK] * 32, 0.2)
  end
end
