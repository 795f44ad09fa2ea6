# frozen_string_literal: true

require "test_helper"
require "json"
require "heron/metrics"

class MetricsTest < Minitest::Test
  def setup
    @metrics = Heron::Metrics.new
  end

  def test_counts_connections_and_in_flight_requests
    2.times { @metrics.connection_opened }
    @metrics.connection_closed
    @metrics.request_started
    assert_equal 2, @metrics.value("connections_total")
    assert_equal 1, @metrics.value("connections_open")
    assert_equal 1, @metrics.value("requests_in_flight")
  end

  def test_request_finished_counts_by_status_class_and_observes_latency_and_queue
    @metrics.request_started
    @metrics.request_finished(204, 0.03, 0.002)
    @metrics.request_started
    @metrics.request_finished(503, 1.5)
    snapshot = @metrics.snapshot
    assert_equal({ "2xx" => 1, "3xx" => 0, "4xx" => 0, "5xx" => 1 }, snapshot["requests"])
    assert_equal 0, snapshot["gauges"]["requests_in_flight"]
    assert_in_delta 1.5, snapshot["latency"]["5xx"]["sum"]
    assert_equal 1, snapshot["queue"]["counts"].sum, "nil queue time is not observed"
  end

  def test_in_flight_never_goes_below_zero
    @metrics.request_finished(200, 0.01)
    assert_equal 0, @metrics.value("requests_in_flight")
  end

  def test_unusual_statuses_get_their_own_class
    @metrics.request_started
    @metrics.request_finished(101, 0.01)
    assert_equal 1, @metrics.snapshot["requests"]["1xx"]
    assert_equal 1, @metrics.snapshot["latency"]["1xx"]["counts"].sum
  end

  def test_after_reply_backlog_and_worker_restarts
    2.times { @metrics.after_reply_enqueued }
    @metrics.after_reply_finished
    @metrics.worker_restarted
    assert_equal 1, @metrics.value("after_reply_backlog")
    assert_equal 1, @metrics.value("after_reply_total")
    assert_equal 1, @metrics.value("worker_restarts_total")
  end

  def test_snapshot_reads_gc_counts_at_the_time_it_is_taken
    before = @metrics.snapshot["gc"]["count"]
    GC.start
    after = @metrics.snapshot["gc"]
    assert_operator after["count"], :>, before
    assert_equal after["count"], after["major"] + after["minor"]
  end

  def test_snapshot_without_live_gc_reports_only_merged_counts
    assert_equal({ "count" => 0, "major" => 0, "minor" => 0 }, Heron::Metrics.new(live_gc: false).snapshot["gc"])
  end

  def test_merge_adds_a_json_round_tripped_snapshot
    @metrics.connection_opened
    @metrics.request_started
    @metrics.request_finished(200, 0.2, 0.01)
    total = Heron::Metrics.new(live_gc: false)
    2.times { total.merge(JSON.parse(JSON.generate(@metrics.snapshot))) }
    snapshot = total.snapshot
    assert_equal 2, snapshot["requests"]["2xx"]
    assert_equal 2, snapshot["counters"]["connections_total"]
    assert_equal 2, snapshot["gauges"]["connections_open"]
    assert_equal 2, snapshot["queue"]["counts"].sum
    assert_equal 3, snapshot["processes"]
    assert_operator snapshot["gc"]["count"], :>=, 2
  end

  def test_merge_without_gauges_keeps_only_monotonic_counts
    @metrics.connection_opened
    total = Heron::Metrics.new(live_gc: false).merge(@metrics.snapshot, gauges: false)
    assert_equal 1, total.value("connections_total")
    assert_equal 0, total.value("connections_open")
    assert_equal 1, total.snapshot["processes"]
  end

  def test_counts_stay_exact_under_threads
    threads = 4.times.map { Thread.new { 500.times { @metrics.request_started; @metrics.request_finished(200, 0.001) } } }
    threads.each(&:join)
    assert_equal 2000, @metrics.snapshot["requests"]["2xx"]
    assert_equal 0, @metrics.value("requests_in_flight")
  end

  def test_process_wide_registry_and_reset
    first = Heron::Metrics.current
    assert_same first, Heron::Metrics.current
    fresh = Heron::Metrics.reset
    refute_same first, fresh
    assert_same fresh, Heron::Metrics.current
  end

  def test_status_class_and_number_formatting
    assert_equal "2xx", Heron::Metrics.status_class(299)
    assert_equal "5xx", Heron::Metrics.status_class(999)
    assert_equal "1", Heron::Metrics.format_number(1.0)
    assert_equal "0.25", Heron::Metrics.format_number(0.25)
  end

  def test_to_prometheus_renders_the_snapshot
    assert_includes @metrics.to_prometheus, "# TYPE heron_requests_total counter\n"
  end
end
