# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "heron/attack"

class OptionsTest < Minitest::Test
  Options = Heron::Attack::Options

  def parse(*argv)
    Options.parse(argv)
  end

  def assert_usage(message, *argv)
    error = assert_raises(Heron::Attack::UsageError) { parse(*argv) }
    assert_match message, error.message
  end

  def test_full_command_line
    options = parse("http://h/", "--rate", "50", "-d", "1500ms", "-c", "4", "-X", "post", "-H", "A: 1", "-H", "B: 2",
                    "--body", "x", "--timeout", "2", "--no-keepalive", "--per-request", "--json", "a.json",
                    "--html", "a.html", "--processes", "2")
    assert_equal ["http://h/", 50.0, 1.5, 4, "post", ["A: 1", "B: 2"], "x", 2.0, false, true, "a.json", "a.html", 2],
                 [options.url, options.load.rate, options.load.duration, options.load.connections, options.request.method,
                  options.request.headers, options.request.body, options.client.timeout, options.client.keepalive,
                  options.output.per_request, options.output.json, options.output.html, options.processes.count]
    assert_equal 75, options.load.total_requests
  end

  def test_defaults_and_request_count
    options = parse("http://h/", "-r", "10", "-n", "7")
    assert_equal [7, "GET", 30.0, true, 1, nil], [options.load.total_requests, options.request.method, options.client.timeout,
                                                   options.client.keepalive, options.processes.count, options.load.connections]
  end

  def test_duration_units
    assert_in_delta 120.0, parse("http://h/", "-r", "1", "-d", "2m").load.duration
    assert_in_delta 3.0, parse("http://h/", "-r", "1", "-d", "3").load.duration
  end

  def test_body_file
    Dir.mktmpdir do |dir|
      File.binwrite(File.join(dir, "b"), "\x00\x01")
      assert_equal "\x00\x01".b, parse("http://h/", "-r", "1", "-n", "1", "--body-file", File.join(dir, "b")).request.body
    end
    assert_usage(/cannot read body file/, "http://h/", "-r", "1", "-n", "1", "--body-file", "/nonexistent/b")
  end

  def test_targets_and_compare_and_help
    assert_equal "t.txt", parse("--targets", "t.txt", "-r", "1", "-n", "1").request.targets_file
    assert_equal %w[a.json b.json], parse("--compare", "a.json", "b.json", "--html", "o.html").output.compare
    assert parse("--help").help
  end

  def test_bad_arguments
    assert_usage(/give a URL/, "-r", "1", "-n", "1")
    assert_usage(/not both/, "http://h/", "--targets", "t", "-r", "1", "-n", "1")
    assert_usage(/--rate must be/, "http://h/", "-n", "1")
    assert_usage(/--rate must be/, "http://h/", "-r", "0", "-n", "1")
    assert_usage(/exactly one of --duration or -n/, "http://h/", "-r", "1")
    assert_usage(/exactly one of --duration or -n/, "http://h/", "-r", "1", "-n", "1", "-d", "1")
    assert_usage(/no requests/, "http://h/", "-r", "1", "-d", "0.5")
    assert_usage(/bad duration/, "http://h/", "-r", "1", "-d", "soon")
    assert_usage(/--connections must be/, "http://h/", "-r", "1", "-n", "1", "-c", "0")
    assert_usage(/--processes must be/, "http://h/", "-r", "1", "-n", "1", "--processes", "0")
    assert_usage(/--processes must be at most 256/, "http://h/", "-r", "1", "-n", "1", "--processes", "257")
    assert_usage(/--timeout must be/, "http://h/", "-r", "1", "-n", "1", "--timeout", "0")
    assert_usage(/bad header/, "http://h/", "-r", "1", "-n", "1", "-H", "nocolon")
    assert_usage(/unexpected argument/, "http://h/", "extra", "-r", "1", "-n", "1")
    assert_usage(/invalid option/, "http://h/", "--bogus")
    assert_usage(/--rate must be a positive number/, "http://h/", "-r", "fast")
    assert_usage(/missing argument/, "http://h/", "-r")
  end

  def test_client_settings_gather_what_a_generator_needs_from_the_groups
    settings = parse("https://h/", "-r", "1", "-n", "1", "--http2", "-k", "-c", "2", "--timeout", "5", "--max-streams", "7").client_settings
    assert_equal [5.0, true, 2, 7, ["h2"]], [*settings.values_at(:timeout, :keepalive, :connections, :max_streams), settings[:tls].alpn_protocols]
    assert_equal({ timeout: 30.0, keepalive: true, tls: nil, connections: nil, max_streams: nil }, parse("http://h/", "-r", "1", "-n", "1").client_settings)
  end

  # The groups define their options; Options lays them out in this order in --help.
  def test_help_lists_the_options_in_order
    help = Options.new.parser.help
    assert_equal %w[--rate --stages --knee --duration --requests --connections --processes --calibrate --calibration
                    --timeout --[no-]keepalive --http2 --max-streams --connect-rate --method --header --body --body-file
                    --targets --pick --seed --insecure --cacert --per-request --json --html --hdr-log --csv --compare --help
                    --fail-if], help.scan(/^\s+(?:-\w, )?(--\S+)/).flatten
  end

  def test_bad_compare
    assert_usage(/two or more files/, "--compare", "a.json", "--html", "o.html")
    assert_usage(/at most 8 files/, "--compare", *(1..9).map { |i| "#{i}.json" })
    assert_equal 3, parse("--compare", "a.json", "b.json", "c.json").output.compare.size
  end

  def test_ramps_and_stages
    ramp = parse("http://h/", "--rate", "100..300", "-d", "10s")
    assert_equal 2000, ramp.load.total_requests
    assert_in_delta 200.0, ramp.load.rate, 1e-9
    stages = parse("http://h/", "--stages", "2s:10,1s:0,3s:20..40", "--knee", "p99>5ms", "--knee", "errors>1%")
    assert_equal 110, stages.load.total_requests
    assert_equal 6.0, stages.load.duration
    assert_equal %w[p99>5ms errors>1%], stages.thresholds.knee.map(&:expression)
    assert_usage(/needs --duration, not -n/, "http://h/", "--rate", "1..5", "-n", "10")
    assert_usage(/--stages replaces/, "http://h/", "--stages", "1s:5", "-r", "5")
    assert_usage(/--stages replaces/, "http://h/", "--stages", "1s:5", "-d", "5")
    assert_usage(/stage's rate must be/, "http://h/", "--stages", "1s:-5")
    assert_usage(/--knee takes p50, p99, max or errors/, "http://h/", "-r", "1", "-n", "1", "--knee", "rate<5%")
  end

  def test_calibrate_takes_one_http_url_a_top_rate_and_a_step
    calibrate = parse("--calibrate", "http://h/", "--rate", "5000", "-d", "500ms", "--calibration", "/tmp/c.json")
    assert_equal [5000.0, 0.5, "/tmp/c.json"], [calibrate.load.calibrate_max_rate, calibrate.load.calibrate_step, calibrate.processes.calibration]
    defaults = parse("--calibrate", "http://h/")
    assert_equal [100_000.0, 2.0], [defaults.load.calibrate_max_rate, defaults.load.calibrate_step]
    assert_usage(/--calibrate takes a URL, not --targets/, "--calibrate", "--targets", "t.txt")
    assert_usage(/takes no --stages, -n or --processes/, "--calibrate", "http://h/", "-n", "5")
    assert_usage(/takes no --stages, -n or --processes/, "--calibrate", "http://h/", "--processes", "2")
    assert_usage(/not a ramp/, "--calibrate", "http://h/", "--rate", "1..5")
    assert_usage(/give an http:\/\/ or https:\/\/ URL/, "--calibrate", "ws://h/")
  end
end
