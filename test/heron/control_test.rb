# frozen_string_literal: true

require "test_helper"
require "json"
require "open3"
require "fileutils"
require "heron/control"

# The control listener of real `heron` processes, over real sockets, driven by real signals and
# by `heron ctl`.
class ControlTest < Minitest::Test
  HELD_APP = <<~RU
    run lambda { |env|
      if env["PATH_INFO"] == "/hold"
        File.write("held", "1")
        sleep 0.05 until File.exist?("release")
      end
      [200, { "content-type" => "text/plain" }, ["done"]]
    }
  RU

  def test_ready_turns_503_as_soon_as_a_drain_starts_while_requests_finish
    pid, port, log = spawn_heron(HELD_APP, "--control-bind", "tcp://127.0.0.1:0", "--shutdown-timeout", "20")
    control = control_port(log)
    # The port takes connections (the kernel's backlog) a moment before the reactor reports ready.
    eventually { http(control, "GET /health/ready") == [200, "ready\n"] }
    dir = File.dirname(log)
    held = Thread.new { http(port, "GET /hold") }
    eventually { File.exist?(File.join(dir, "held")) }
    Process.kill("TERM", pid)
    eventually { http(control, "GET /health/ready") == [503, "draining\n"] }
    assert_equal [200, "live\n"], http(control, "GET /health/live")
    File.write(File.join(dir, "release"), "1")
    assert_equal [200, "done"], held.value
    assert_equal 0, wait_exit(pid)&.exitstatus
  ensure
    stop_heron(pid)
  end

  # The listener opens before the app loads: live at once, booting until the server accepts.
  def test_a_single_process_is_live_and_booting_while_its_app_loads
    dir = Dir.mktmpdir("heron-test")
    File.write(File.join(dir, "config.ru"), "deadline = Time.now + 30\nsleep 0.05 until File.exist?('go') || Time.now > deadline\n#{HELD_APP}")
    log = File.join(dir, "heron.log")
    pid = Process.spawn(RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "-b", "tcp://127.0.0.1:0", "-e", "production",
                        "--control-bind", "tcp://127.0.0.1:0", "config.ru", chdir: dir, out: log, err: [:child, :out])
    control = control_port(log)
    assert_equal [200, "live\n"], http(control, "GET /health/live")
    assert_equal [503, "booting\n"], http(control, "GET /health/ready")
    File.write(File.join(dir, "go"), "1")
    port = wait_for_port(log, pid)
    eventually { http(control, "GET /health/ready") == [200, "ready\n"] }
    assert_equal 200, http(port, "GET /").first
  ensure
    stop_heron(pid)
  end

  def test_a_cluster_is_booting_until_its_workers_have_loaded_the_app
    slow_app = "deadline = Time.now + 30\nsleep 0.05 until File.exist?('go') || Time.now > deadline\n#{HELD_APP}"
    pid, port, log = spawn_heron(slow_app, "-w", "2", "--control-bind", "tcp://127.0.0.1:0")
    control = control_port(log)
    assert_equal [503, "booting\n"], http(control, "GET /health/ready")
    assert_equal "booting", JSON.parse(http(control, "GET /stats").last)["status"]
    File.write(File.join(File.dirname(log), "go"), "1")
    eventually { http(control, "GET /health/ready") == [200, "ready\n"] }
    assert_equal 200, http(port, "GET /").first
  ensure
    stop_heron(pid)
  end

  def test_stats_counts_requests_and_connections_of_a_single_process
    pid, port, log = spawn_heron(HELD_APP, "--control-bind", "tcp://127.0.0.1:0")
    control = control_port(log)
    3.times { assert_equal 200, http(port, "GET /").first }
    stats = JSON.parse(http(control, "GET /stats").last)
    assert_equal ["single", "ready", 3, 0, 0], stats.values_at("mode", "status", "requests_served", "in_flight", "workers")
    assert_equal pid, stats["pid"]
    assert_equal 0, stats["backlog"]
  ensure
    stop_heron(pid)
  end

  # A connection that has sent nothing waits parked, without a fiber: /stats counts them.
  def test_stats_counts_parked_connections_of_a_single_process_and_of_a_cluster
    [[], %w[-w 2]].each do |mode|
      pid, port, log = spawn_heron(HELD_APP, *mode, "--control-bind", "tcp://127.0.0.1:0")
      assert_equal 200, http(port, "GET /").first
      idle = Array.new(3) { TCPSocket.new("127.0.0.1", port) }
      stats = eventually { JSON.parse(http(control_port(log), "GET /stats").last).then { |s| s["parked_connections"] == 3 && s } }
      assert stats, "#{mode.inspect}: three idle connections parked"
    ensure
      idle&.each(&:close)
      stop_heron(pid)
    end
  end

  def test_a_second_heron_starts_when_the_control_port_is_taken
    taken = TCPServer.new("127.0.0.1", 0)
    pid, port, log = spawn_heron(HELD_APP, "--control-bind", "tcp://127.0.0.1:#{taken.addr[1]}")
    assert_equal 200, http(port, "GET /").first
    assert_match(/control listener tcp:\/\/127\.0\.0\.1:#{taken.addr[1]} is in use; listening on tcp:\/\/127\.0\.0\.1:\d+ instead/,
                 File.read(log))
    assert_equal 200, http(control_port(log), "GET /health/ready").first
  ensure
    taken&.close
    stop_heron(pid)
  end

  def test_heron_ctl_against_a_cluster_titles_stats_backtraces_and_stop
    pid, port, log = spawn_heron(HELD_APP, "-w", "2", "--tag", "ctltest", "--metrics", "--control-bind", "tcp://127.0.0.1:0")
    url = "tcp://127.0.0.1:#{control_port(log)}"
    assert_equal 200, http(port, "GET /").first
    stats = eventually { JSON.parse(ctl(url, "stats").first).then { |s| s["workers"] == 2 && s["requests_served"] == 1 && s } }
    served = http(control_port(log), "GET /metrics").last.scan(/^heron_requests_total\{worker="[01]",status="2xx"\} (\d+)$/)
    assert_equal 1, served.flatten.sum(&:to_i), "one request, counted in the series of the worker that served it"
    assert_equal ["cluster", "ready", pid, "ctltest"], stats.values_at("mode", "status", "pid", "tag")
    titles = stats["worker_pids"].map { |worker| File.read("/proc/#{worker}/cmdline") }
    assert_equal ["heron worker 0 [ctltest]", "heron worker 1 [ctltest]"], titles.map(&:strip).sort
    assert_match(/\Aheron master \[ctltest\] http:\/\/127\.0\.0\.1:#{port}/, File.read("/proc/#{pid}/cmdline"))
    control_socket = listening_inode(control_port(log))
    stats["worker_pids"].each do |worker|
      refute_includes socket_inodes(worker), control_socket, "a worker holds the master's control listener"
    end
    assert_includes socket_inodes(pid), control_socket
    report = ctl(url, "backtraces").first
    assert_includes report, "== thread"
    assert_equal ["######## worker 0", "######## worker 1"], report.scan(/^######## worker \d+/).sort
    assert_includes report, "in `accept_loop'", "a worker's task tree shows where its accept task waits"
    out, err, status = ctl(url, "stop")
    assert_equal [0, ""], [status.exitstatus, err]
    assert_equal "sent SIGTERM to #{pid} [ctltest]\n", out
    assert_equal 0, wait_exit(pid)&.exitstatus
  ensure
    stop_heron(pid)
  end

  def test_heron_ctl_says_when_it_cannot_reach_heron_or_is_refused
    taken = TCPServer.new("127.0.0.1", 0)
    port = taken.addr[1]
    taken.close
    _, err, status = ctl("tcp://127.0.0.1:#{port}", "stats")
    assert_equal 1, status.exitstatus
    assert_match(/heron ctl: cannot reach the control listener at tcp:\/\/127\.0\.0\.1:#{port}/, err)
    _, err, status = ctl("tcp://127.0.0.1:#{port}", "explode")
    assert_equal 2, status.exitstatus
    assert_match(/unknown command "explode"/, err)
  end

  # Anyone who reaches a control port on 0.0.0.0 could POST /control/stop: without a token,
  # Heron refuses to start and says why, before it loads the app.
  def test_a_control_listener_other_hosts_reach_needs_a_token
    control = free_port
    log, status = start_and_wait(HELD_APP, "--control-bind", "tcp://0.0.0.0:#{control}")
    assert_equal 1, status&.exitstatus, log
    assert_match(%r{could not start: control_bind tcp://0\.0\.0\.0:#{control} can be reached from other hosts, and control_token is not set}, log)
    pid, _, log = spawn_heron(HELD_APP, "--control-bind", "tcp://0.0.0.0:#{control}", "--control-token", "s3cret")
    # Where the listener went: another suite beside this one may have taken the port meanwhile.
    control = Integer(eventually { File.read(log)[%r{control on tcp://[^ ]+:(\d+)}, 1] })
    eventually { http(control, "GET /health/live").first == 200 }
    assert_equal 401, http(control, "POST /control/stop", host: "127.0.0.1:#{control}").first
    refute Process.wait(pid, Process::WNOHANG)
  ensure
    stop_heron(pid)
  end

  # Two apps on one machine, both configured for the same control address: the second one's
  # listener moves to a free port. `heron ctl stop` in the second app's directory used to read
  # control_bind from its config and stop the *first* server; it now follows the state file.
  def test_heron_ctl_in_an_apps_directory_stops_that_app_only
    shared = "tcp://127.0.0.1:#{free_port}"
    first, first_port, first_log = spawn_app("control_bind #{shared.inspect}\n")
    eventually { File.exist?(File.join(File.dirname(first_log), "tmp/heron-control.json")) }
    second, second_port, second_log = spawn_app("control_bind #{shared.inspect}\n")
    moved = eventually { File.read(second_log)[%r{\* Control on (tcp://127\.0\.0\.1:\d+)}, 1] }
    refute_equal shared, moved, "the banner says where the second listener went"
    eventually { File.exist?(File.join(File.dirname(second_log), "tmp/heron-control.json")) }
    out, err, status = ctl_in(File.dirname(second_log), "stop")
    assert_equal [0, "sent SIGTERM to #{second}"], [status.exitstatus, out[/\Asent SIGTERM to \d+/]], err
    assert_equal 0, wait_exit(second)&.exitstatus
    assert_equal 200, http(first_port, "GET /").first, "the first app still serves"
    refute Process.wait(first, Process::WNOHANG)
    refute File.exist?(File.join(File.dirname(second_log), "tmp/heron-control.json")), "removed on exit"
    assert_raises(Errno::ECONNREFUSED) { TCPSocket.new("127.0.0.1", second_port) }
  ensure
    stop_heron(first)
    stop_heron(second)
  end

  # With no --control-url, no state file and no control_bind in a config file, there is no
  # address that is surely this user's server: a clear error, not 127.0.0.1:9393.
  def test_heron_ctl_never_guesses_an_address
    Dir.mktmpdir("heron-ctl-nowhere") do |dir|
      out, err, status = ctl_in(dir, "stats")
      assert_equal [1, ""], [status.exitstatus, out]
      assert_match(/heron ctl: no Heron recorded its control listener here .* pass --control-url/, err)
    end
  end

  def test_heron_ctl_sends_its_token
    pid, _port, log = spawn_heron(HELD_APP, "--control-bind", "tcp://127.0.0.1:0", "--control-token", "s3cret")
    url = "tcp://127.0.0.1:#{control_port(log)}"
    _, err, status = ctl(url, "stats")
    assert_equal [1, true], [status.exitstatus, err.include?("Unauthorized")]
    out, _, status = ctl(url, "stats", "--control-token", "s3cret")
    assert_equal [0, pid], [status.exitstatus, JSON.parse(out)["pid"]]
  ensure
    stop_heron(pid)
  end

  private

  # The inode of the socket listening on 127.0.0.1:port, from /proc/net/tcp.
  def listening_inode(port)
    line = File.readlines("/proc/net/tcp").find { |row| row.split[1] == format("0100007F:%04X", port) && row.split[3] == "0A" }
    line&.split&.at(9) || flunk("nothing listens on #{port}")
  end

  def socket_inodes(pid)
    Dir.glob("/proc/#{pid}/fd/*").filter_map { |fd| File.readlink(fd)[/\Asocket:\[(\d+)\]/, 1] rescue nil }
  end

  def control_port(log)
    eventually { File.read(log)[%r{control on tcp://127\.0\.0\.1:(\d+)}, 1] || File.read(log)[/listening on tcp:\/\/127\.0\.0\.1:(\d+)/, 1] }.to_i
  end

  def http(port, request_line, host: "localhost:#{port}")
    socket = TCPSocket.new("127.0.0.1", port)
    socket.write("#{request_line} HTTP/1.1\r\nhost: #{host}\r\nconnection: close\r\n\r\n")
    status, _, body = read_response(socket)
    [status, body]
  ensure
    socket&.close
  end

  # Runs heron in a fresh directory until it exits by itself (a start that must fail).
  # @return [Array(String, Process::Status)] its log and exit status (nil status: still running).
  def start_and_wait(app, *args)
    dir = Dir.mktmpdir("heron-test")
    File.write(File.join(dir, "config.ru"), app)
    log = File.join(dir, "heron.log")
    pid = Process.spawn(RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "-b", "tcp://127.0.0.1:0", *args,
                        "config.ru", chdir: dir, out: log, err: [:child, :out], pgroup: true)
    (@spawned_groups ||= []) << pid
    status = wait_exit(pid, timeout: 30)
    [File.read(log), status]
  end

  # Starts heron in a fresh directory holding config/heron.rb with `config`.
  # @return [Array(Integer, Integer, String)] pid, port, log path.
  def spawn_app(config)
    dir = Dir.mktmpdir("heron-app")
    FileUtils.mkdir_p(File.join(dir, "config"))
    File.write(File.join(dir, "config/heron.rb"), config)
    File.write(File.join(dir, "config.ru"), HELD_APP)
    log = File.join(dir, "heron.log")
    pid = Process.spawn(RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "-b", "tcp://127.0.0.1:0", "config.ru",
                        chdir: dir, out: log, err: [:child, :out], pgroup: true)
    (@spawned_groups ||= []) << pid
    [pid, wait_for_port(log, pid), log]
  end

  def ctl_in(dir, *args)
    Open3.capture3(RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "ctl", *args, chdir: dir)
  end

  def ctl(url, *args)
    Open3.capture3(RbConfig.ruby, File.join(ProcessHelper::ROOT, "exe/heron"), "ctl", "--control-url", url, *args)
  end
end
