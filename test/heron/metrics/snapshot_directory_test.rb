# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/metrics"

class MetricsSnapshotDirectoryTest < Minitest::Test
  def setup
    @path = File.join(Dir.mktmpdir("heron-metrics-test"), "snapshots")
    @directory = Heron::Metrics::SnapshotDirectory.new(@path)
    @metrics = Heron::Metrics.new
  end

  def teardown
    FileUtils.rm_rf(File.dirname(@path))
  end

  def test_write_then_read_back_every_process
    @metrics.connection_opened
    @directory.write(@metrics.snapshot, pid: 11)
    @directory.write(@metrics.snapshot, pid: 12)
    snapshots = @directory.snapshots
    assert_equal 2, snapshots.size
    assert_equal [1, 1], snapshots.map { |snapshot| snapshot["counters"]["connections_total"] }
    assert_empty Dir.glob(File.join(@path, ".*.tmp")), "temporary files are renamed away"
  end

  def test_unreadable_files_are_skipped
    File.write(File.join(@path, "99.json"), "{half")
    assert_empty @directory.snapshots
  end

  def test_discard_deletes_a_dead_workers_file
    @directory.write(@metrics.snapshot, pid: 21)
    assert @directory.discard(21)
    refute @directory.discard(21), "a second discard finds nothing"
    assert_empty @directory.snapshots
  end

  def test_publish_writes_this_process_snapshot_periodically
    @metrics.worker_restarted
    @directory.publish(@metrics, interval: 0.01, times: 2)
    assert_equal [Process.pid], @directory.snapshots.map { |snapshot| snapshot["pid"] }
  end

  def test_remove_deletes_the_directory
    @directory.remove
    refute File.exist?(@path)
  end
end
