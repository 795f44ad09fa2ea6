# frozen_string_literal: true

require "test_helper"
require "stringio"
require "tmpdir"
require "open3"
require "csv"
require_relative "support/test_server"
require_relative "support/report_fixture"

class CLITest < Minitest::Test
  include ReportFixture

  def cli(*argv)
    @stdout = StringIO.new
    @stderr = StringIO.new
    Heron::Attack::CLI.new(argv, stdout: @stdout, stderr: @stderr).run
  end

  def test_bad_arguments_exit_2_with_one_line
    [%w[http://h/], %w[http://h/ -r 1 -n 1 --bogus], %w[ftp://h/ -r 1 -n 1], %w[--targets /nonexistent -r 1 -n 1],
     %w[--compare /nonexistent.json b.json --html o.html], %w[http://h/ -X FETCH -r 1 -n 1]].each do |argv|
      assert_equal 2, cli(*argv), argv.inspect
      assert_equal 1, @stderr.string.lines.size, argv.inspect
      assert_match(/\Aheron attack: \S/, @stderr.string)
      assert_empty @stdout.string
    end
  end

  def test_help
    assert_equal 0, cli("--help")
    assert_includes @stdout.string, "Usage: heron attack URL --rate R"
    assert_includes @stdout.string, "--per-request"
  end

  def test_other_failures_exit_1
    assert_equal 1, cli("http://no-such-host.invalid/", "-r", "1", "-n", "1")
    assert_match(/\Aheron attack: SocketError: /, @stderr.string)
  end

  def test_run_writes_text_json_and_html
    Dir.mktmpdir do |dir|
      json = File.join(dir, "run.json")
      html = File.join(dir, "run.html")
      TestServer.fork_server do |base|
        assert_equal 0, cli("#{base}/x", "-r", "50", "-n", "20", "--json", json, "--html", html, "--per-request")
      end
      assert_equal 20, @stdout.string.lines.grep(/\Arequest \d+ status=200 latency=/).size
      assert_match(/^Requests +sent 20 +responses 20 +errors 0/, @stdout.string)
      report = Heron::Attack::JsonReport.load(json)
      assert_equal({ "200" => 20 }, report["status_codes"])
      assert_includes File.read(html), "<svg"
      assert_empty @stderr.string
    end
  end

  # Ctrl-C once the first request reached the server (a handshake: the run is under way), in a
  # run planned for 50 s, so it cannot finish first however slow the machine.
  def test_ctrl_c_stops_sending_and_still_reports
    Dir.mktmpdir do |dir|
      log = File.join(dir, "requests")
      TestServer.fork_server(log: log) do |base|
        interrupter = Thread.new do
          Timeout.timeout(60) { sleep(0.05) until File.size?(log) }
          Process.kill(:INT, Process.pid)
        end
        assert_equal 0, cli("#{base}/", "-r", "20", "-n", "1000", "--processes", "2")
        interrupter.join
      end
    end
    assert_match(/^warning: stopped early: \d+ of 1000 planned requests were sent$/, @stdout.string)
    assert_equal "DEFAULT", trap(:INT, "DEFAULT"), "the CLI puts the previous handler back"
  end

  def test_targets_file_round_robin
    Dir.mktmpdir do |dir|
      TestServer.fork_server do |base|
        File.write(File.join(dir, "t"), "GET #{base}/a\nHEAD #{base}/b\n")
        assert_equal 0, cli("--targets", File.join(dir, "t"), "-r", "50", "-n", "10", "-H", "X-Test: 1", "--no-keepalive")
      end
      assert_match(/^Bytes +in 25 +out 0$/, @stdout.string) # five GETs with a 5-byte body, five HEADs
    end
  end

  def test_compare_several_runs_as_a_table_of_ratios_and_html
    Dir.mktmpdir do |dir|
      paths = %w[before after third].map { |name| File.join(dir, "#{name}.json") }
      paths.each { |path| Heron::Attack::JsonReport.write(path, fixture_report) }
      slower = fixture_report.tap { |r| r["latency_ms"]["corrected"]["p99"] *= 2 }
      Heron::Attack::JsonReport.write(paths[1], slower)
      assert_equal 0, cli("--compare", *paths)
      assert_match(/^ +before +after +third$/, @stdout.string)
      p99 = fixture_report.dig("latency_ms", "corrected", "p99")
      assert_match(/^p99 ms +#{format('%.2f', p99)} +#{format('%.2f', p99 * 2)} \(2.00x\) +#{format('%.2f', p99)} \(1.00x\)$/, @stdout.string)
      assert_match(/^p50 ms .* \(1.00x\) .* \(1.00x\)$/, @stdout.string)
      out = File.join(dir, "compare.html")
      assert_equal 0, cli("--compare", *paths, "--html", out)
      html = File.read(out)
      %w[before after third].each { |label| assert_includes html, ">#{label} p99</text>" }
    end
  end

  def test_hdr_log_is_read_by_hdrhistograms_own_log_processor
    jar = "/usr/share/java/hdrhistogram.jar" # Debian's libhdrhistogram-java, installed by bin/setup
    assert File.exist?(jar), "#{jar} missing: run bin/setup"
    Dir.mktmpdir do |dir|
      log = File.join(dir, "run.hlog")
      json = File.join(dir, "run.json")
      TestServer.fork_server(delay: 0.002) do |base|
        assert_equal 0, cli("#{base}/", "-r", "100", "-n", "150", "--hdr-log", log, "--json", json)
      end
      assert_equal 2, File.readlines(log).grep(/\A\d+\.\d{3},1\.000,[\d.]+,HIST[A-Za-z0-9+\/]+=*$/).size, "one interval per second"
      out, status = Open3.capture2e("java", "-cp", jar, "org.HdrHistogram.HistogramLogProcessor", "-i", log, "-csv",
                                    "-outputValueUnitRatio", "1")
      assert status.success?, out
      rows = out.lines.grep(/\A[\d.]+,[\d.]+,\d+,/).map { |l| l.split(",") }
      histogram = Heron::Attack::Histogram.from_h(Heron::Attack::JsonReport.load(json)["histograms"]["corrected"])
      assert_equal [150], rows.map { |r| r[2].to_i }.max(1)
      median = rows.find { |r| r[1].to_f >= 0.5 }
      assert_equal histogram.percentile(50), median[0].to_f.round
      assert_operator histogram.percentile(50), :>=, 2000
      assert_equal histogram.percentile(100), [rows.last[0].to_f.round, histogram.max].min
    end
  end

  def test_csv_has_a_row_per_second
    Dir.mktmpdir do |dir|
      csv = File.join(dir, "run.csv")
      TestServer.fork_server(fail_from: 16) do |base|
        assert_equal 0, cli("#{base}/", "--stages", "1s:10,1s:20", "--csv", csv)
      end
      rows = CSV.read(csv)
      assert_equal %w[second offered responses ok failed errors p50_ms p99_ms max_ms], rows.first
      assert_equal [%w[0 10.0 10 10 0 0], %w[1 20.0 20 5 15 0]], rows.drop(1).map { |r| r.first(6) }
      assert(rows.drop(1).all? { |r| r[6].to_f.positive? && r[7].to_f >= r[6].to_f })
    end
  end

  def test_broken_thresholds_exit_3_naming_each_and_are_recorded
    Dir.mktmpdir do |dir|
      json = File.join(dir, "run.json")
      status = TestServer.fork_server(delay: 0.02) do |base|
        cli("#{base}/", "-r", "50", "-n", "10", "--json", json,
            "--fail-if", "p50>1ms", "--fail-if", "errors>0.1%", "--fail-if", "p99>10s")
      end
      assert_equal 3, status
      assert_equal ["heron attack: threshold broken: p50>1ms (actual "], @stderr.string.lines.map { |l| l[/\A.*actual /] }
      checks = Heron::Attack::JsonReport.load(json)["thresholds"]
      assert_equal [true, false, false], checks.map { |t| t["broken"] }
      assert_operator checks.first["actual"], :>=, 20
      assert_match(/^  BROKEN  p50>1ms  \(actual \d+\.\d+ms\)$/, @stdout.string)
      assert_match(/^  ok      errors>0.1%  \(actual 0.00%\)$/, @stdout.string)
    end
  end

  def test_thresholds_that_hold_exit_0
    TestServer.fork_server do |base|
      assert_equal 0, cli("#{base}/", "-r", "50", "-n", "10", "--fail-if", "errors>0", "--fail-if", "p99>10s")
    end
    assert_empty @stderr.string
  end

  def test_every_request_failing_exits_4
    TestServer.fork_server(status: 500) do |base|
      assert_equal 4, cli("#{base}/", "-r", "50", "-n", "5")
    end
    assert_equal "heron attack: every request failed (5 sent, none succeeded)\n", @stderr.string
    port = TCPServer.open("127.0.0.1", 0) { |s| s.addr[1] } # nothing listens there any more
    assert_equal 4, cli("http://127.0.0.1:#{port}/", "-r", "50", "-n", "3")
    assert_match(/^Errors +.*refused:3/, @stdout.string)
  end

  def test_targets_file_sends_each_targets_method_headers_and_body_by_weight
    Dir.mktmpdir do |dir|
      log = File.join(dir, "log")
      File.write(File.join(dir, "body.json"), %({"n":1}))
      TestServer.fork_server(log: log) do |base|
        File.write(File.join(dir, "t"), <<~TARGETS)
          POST #{base}/orders weight=2
          Content-Type: application/json
          @body.json
          PUT #{base}/notes
          X-Note: yes
          @@hello
          GET #{base}/
        TARGETS
        assert_equal 0, cli("--targets", File.join(dir, "t"), "-r", "100", "-n", "8", "-H", "X-Run: 1", "-c", "1")
      end
      requests = File.readlines(log).map { |line| JSON.parse(line) }
      assert_equal ["POST /orders", "PUT /notes", "GET /", "POST /orders"] * 2, requests.map { |r| r["head"][/\A\S+ \S+/] }
      assert_equal [%({"n":1}), "hello", "", %({"n":1})] * 2, requests.map { |r| r["body"] }
      assert(requests.all? { |r| r["head"].include?("X-Run: 1\r\n") })
      assert_includes requests[0]["head"], "Content-Type: application/json\r\n"
      assert_includes requests[1]["head"], "X-Note: yes\r\n"
      assert_equal 2, requests.count { |r| r["head"].include?("X-Note") }
    end
  end

  def test_random_pick_records_its_seed
    Dir.mktmpdir do |dir|
      json = File.join(dir, "run.json")
      TestServer.fork_server do |base|
        File.write(File.join(dir, "t"), "GET #{base}/a weight=9\nHEAD #{base}/b\n")
        assert_equal 0, cli("--targets", File.join(dir, "t"), "-r", "100", "-n", "10", "--pick", "random", "--seed", "5", "--json", json)
      end
      assert_equal({ "pick" => "random", "seed" => 5 }, Heron::Attack::JsonReport.load(json)["plan"].slice("pick", "seed"))
    end
  end

  def test_ramp_sends_by_the_integral_of_the_rate_and_tabulates_against_offered_rate
    Dir.mktmpdir do |dir|
      json = File.join(dir, "run.json")
      TestServer.fork_server do |base|
        assert_equal 0, cli("#{base}/", "--rate", "20..180", "--duration", "2s", "--json", json)
      end
      report = Heron::Attack::JsonReport.load(json)
      assert_equal 200, report["requests"]["sent"]
      assert_equal [60, 140], report["timeline"].map { |s| s["responses"] }, "by due time: 20→100/s, then 100→180/s"
      assert_equal [60.0, 140.0], report["load"].map { |r| r["offered_rate"] }
      assert_equal [[0.0, 2.0, 20.0, 180.0]], report["plan"]["stages"].map { |s| s.values_at("start_s", "duration_s", "from", "to") }
      assert_match(/^Heron attack: GET \S+ at 20.00..180.00\/s for 2.000s/, @stdout.string)
      assert_match(/^ +0s-1s +60.0 +60.0 /, @stdout.string)
      assert_match(/^ +1s-2s +140.0 +140.0 /, @stdout.string)
    end
  end

  def test_stages_mark_the_knee_where_errors_cross_the_limit
    Dir.mktmpdir do |dir|
      json = File.join(dir, "run.json")
      TestServer.fork_server(fail_from: 21) do |base| # the 21st request (the first of the second stage) on fail
        assert_equal 0, cli("#{base}/", "--stages", "1s:20,1s:40,1s:60", "--knee", "p99>10s", "--knee", "errors>10%", "--json", json)
      end
      knee = Heron::Attack::JsonReport.load(json)["knee"]
      assert_equal({ "conditions" => ["p99>10s", "errors>10%"], "second" => 1, "offered_rate" => 40.0, "held" => ["errors>10%"] }, knee)
      assert_match(/^ +1s-2s +40.0 +0.0 .* 100.00%  <- knee$/, @stdout.string)
      assert_match(/^  knee: at 40.0\/s offered \(second 1\), where errors>10%$/, @stdout.string)
    end
  end
end
