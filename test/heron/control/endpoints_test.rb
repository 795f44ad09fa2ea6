# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "heron/control"
require "heron/metrics"

class ControlEndpointsTest < Minitest::Test
  def setup
    @draining = false
    @state = Heron::Control::State.new(mode: "single", draining: -> { @draining },
                                       counters: -> { { workers: 0, connections: 3 } })
  end

  def test_live_is_always_200_and_ready_follows_booting_ready_draining
    endpoints = Heron::Control::Endpoints.new(@state)
    assert_equal [200, "live\n"], get(endpoints, "/health/live")
    assert_equal [503, "booting\n"], get(endpoints, "/health/ready")
    @state.ready!
    assert_equal [200, "ready\n"], get(endpoints, "/health/ready?probe=k8s")
    @draining = true
    assert_equal [503, "draining\n"], get(endpoints, "/health/ready")
    assert_equal [200, "live\n"], get(endpoints, "/health/live")
  end

  def test_stats_is_json_with_the_counters
    status, body = get(Heron::Control::Endpoints.new(@state), "/stats")
    stats = JSON.parse(body)
    assert_equal 200, status
    assert_equal [Heron::VERSION, Process.pid, "single", "booting", 3, 0],
                 stats.values_at("version", "pid", "mode", "status", "connections", "workers")
    assert_kind_of Float, stats["uptime_seconds"]
    assert_match(/\A\d{4}-\d\d-\d\dT/, stats["boot_time"])
  end

  def test_metrics_when_on_and_404_when_off
    metrics = Heron::Metrics.new
    metrics.connection_opened
    status, body = get(Heron::Control::Endpoints.new(@state, metrics: metrics), "/metrics")
    assert_equal 200, status
    assert_includes body, "heron_connections_open 1\n"
    assert_equal 404, get(Heron::Control::Endpoints.new(@state), "/metrics").first
  end

  def test_metrics_carry_the_accept_backlog_and_the_connection_limit
    listener = TCPServer.new("127.0.0.1", 0)
    waiting = Array.new(3) { TCPSocket.new("127.0.0.1", listener.addr[1]) } # connected, never accepted
    state = Heron::Control::State.new(mode: "single", draining: -> { false }, counters: -> { {} },
                                      listeners: -> { [listener] }, max_connections: 4096)
    _status, body = get(Heron::Control::Endpoints.new(state, metrics: Heron::Metrics.new), "/metrics")
    assert_includes body, "heron_listen_backlog 3\n"
    assert_includes body, "heron_connections_max 4096\n"
    if system("command -v promtool >/dev/null")
      output, status = Open3.capture2e("promtool", "check", "metrics", stdin_data: body)
      assert status.success? && output.strip.empty?, "promtool check metrics:\n#{output}"
    end
  ensure
    waiting&.each(&:close)
    listener&.close
  end

  def test_backtraces_name_this_thread
    status, body = get(Heron::Control::Endpoints.new(@state), "/backtraces")
    assert_equal 200, status
    assert_includes body, "== thread"
    assert_includes body, "test_backtraces_name_this_thread"
  end

  def test_unknown_paths_methods_and_actions
    endpoints = Heron::Control::Endpoints.new(@state, pid: 0)
    assert_equal 404, get(endpoints, "/").first
    assert_equal 405, endpoints.call("POST", "/stats", {}).first
    assert_equal 405, endpoints.call("GET", "/control/stop", {}).first
    assert_equal 404, endpoints.call("POST", "/control/explode", {}).first
    assert_equal 400, endpoints.call(nil, nil, {}).first
  end

  # Each action is a real signal to a real process: a child that traps them and reports.
  def test_actions_send_their_signal_to_the_master_pid
    reader, writer = IO.pipe
    pid = spawn(RbConfig.ruby, "-e", <<~RUBY, out: writer)
      %w[USR2 USR1 HUP TERM QUIT].each { |s| trap(s) { $stdout.puts(s); $stdout.flush } }
      $stdout.puts("ready"); $stdout.flush
      sleep
    RUBY
    writer.close
    assert_equal "ready\n", reader.gets
    endpoints = Heron::Control::Endpoints.new(@state, pid: pid)
    %w[restart phased-restart reopen-logs stop halt].zip(%w[USR2 USR1 HUP TERM QUIT]).each do |action, signal|
      status, _, body = endpoints.call("POST", "/control/#{action}", {})
      assert_equal [202, "sent SIG#{signal} to #{pid}\n"], [status, body]
      assert_equal "#{signal}\n", Timeout.timeout(ProcessHelper::PATIENCE) { reader.gets }
    end
  ensure
    Process.kill("KILL", pid) if pid
    Process.wait(pid) if pid
  end

  def test_a_token_guards_stats_backtraces_and_actions_but_not_health_or_metrics
    endpoints = Heron::Control::Endpoints.new(@state, token: "s3cret", metrics: Heron::Metrics.new, pid: 0)
    assert_equal 401, get(endpoints, "/stats").first
    assert_equal 401, get(endpoints, "/backtraces").first
    assert_equal 401, endpoints.call("POST", "/control/stop", { "authorization" => "Bearer wrong" }).first
    assert_equal 200, endpoints.call("GET", "/stats", { "authorization" => "Bearer s3cret" }).first
    assert_equal 200, get(endpoints, "/health/live").first
    assert_equal 200, get(endpoints, "/metrics").first
  end

  private

  def get(endpoints, target)
    status, _, body = endpoints.call("GET", target, {})
    [status, body]
  end
end
