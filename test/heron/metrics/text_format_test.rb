# frozen_string_literal: true

require "test_helper"
require "heron/metrics"
require "open3"

class MetricsTextFormatTest < Minitest::Test
  def setup
    @metrics = Heron::Metrics.new
    @metrics.request_started
    @metrics.request_finished(200, 0.02, 0.0002)
    @text = Heron::Metrics::TextFormat.new(@metrics.snapshot).render
  end

  def test_every_family_has_help_and_type_before_its_samples
    families = @text.scan(/^# TYPE (\S+) (\S+)$/)
    assert_includes families, %w[heron_request_duration_seconds histogram]
    assert_includes families, %w[heron_gc_major_count_total counter]
    assert_equal families.size, @text.scan(/^# HELP /).size
  end

  def test_samples_are_name_labels_value_lines_ending_in_a_line_feed
    assert @text.end_with?("\n")
    @text.each_line.reject { |line| line.start_with?("#") }.each do |line|
      assert_match(/\A[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+-]+\n\z/, line)
    end
  end

  def test_histograms_are_cumulative_with_inf_equal_to_count
    assert_includes @text, %(heron_request_duration_seconds_bucket{status="2xx",le="0.01"} 0\n)
    assert_includes @text, %(heron_request_duration_seconds_bucket{status="2xx",le="0.025"} 1\n)
    assert_includes @text, %(heron_request_duration_seconds_bucket{status="2xx",le="+Inf"} 1\n)
    assert_includes @text, %(heron_request_duration_seconds_count{status="2xx"} 1\n)
    assert_includes @text, %(heron_request_queue_seconds_bucket{le="0.0005"} 1\n)
  end

  def test_label_values_are_escaped
    snapshot = @metrics.snapshot
    snapshot["requests"] = { %(a"b\\c\nd) => 1 }
    text = Heron::Metrics::TextFormat.new(snapshot).render
    assert_includes text, %(heron_requests_total{status="a\\"b\\\\c\\nd"} 1\n)
  end

  def test_build_info_and_process_metrics
    assert_match(/^heron_build_info\{version="#{Regexp.escape(Heron::VERSION)}",ruby_version="#{RUBY_VERSION}",async_version="[\d.]+"\} 1$/, @text)
    %w[process_cpu_seconds_total process_resident_memory_bytes process_open_fds process_max_fds].each do |name|
      assert_match(/^#{name} \d/, @text)
    end
    start = @text[/^process_start_time_seconds (\S+)$/, 1].to_f
    assert_in_delta Time.now.to_f, start, 3600, "the start time is an epoch stamp from this hour"
    assert_operator start, :<=, Time.now.to_f
  end

  # Prometheus' own linter (Debian's prometheus package; bin/setup installs it).
  def test_promtool_accepts_a_single_process_and_a_cluster_exposition
    skip "promtool not installed (apt-get install prometheus, or bin/setup)" unless system("command -v promtool >/dev/null")
    cluster = [[{ worker: "master" }, @metrics.snapshot], [{ worker: "0" }, @metrics.snapshot], [{ worker: "1" }, @metrics.snapshot]]
    [@text, Heron::Metrics::TextFormat.new(cluster).render].each do |text|
      output, status = Open3.capture2e("promtool", "check", "metrics", stdin_data: text)
      assert status.success?, "promtool check metrics:\n#{output}"
      assert_empty output.strip, "promtool's lint warnings"
    end
  end
end
