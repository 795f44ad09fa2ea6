# frozen_string_literal: true

require "test_helper"

# The forker makes workers with what the master gives them and names the master's own pipe ends
# (forking them for real is covered by cluster_test.rb and cluster/refork_test.rb).
class ClusterForkerTest < Minitest::Test
  def test_a_worker_knows_what_it_replaces
    forker = Heron::Cluster::Forker.new(nil, nil, [], nil)
    old = forker.worker(0)
    fresh = forker.worker(0, replaces: old)
    assert_equal 0, fresh.index
    assert_same old, fresh.replaces
    assert_nil old.replaces
  ensure
    forker&.ios&.each(&:close)
  end

  def test_the_master_ends_are_the_alive_write_end_and_the_channel_read_end
    forker = Heron::Cluster::Forker.new(nil, nil, [], nil)
    writer, reader = forker.ios
    assert_same forker.channel.reader, reader
    assert_kind_of IO, writer
    refute_same reader, writer
  ensure
    forker&.ios&.each { |io| io.close unless io.closed? }
  end
end
