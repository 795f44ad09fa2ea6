# frozen_string_literal: true

# The scale-out proof (issue 13, point 8): two Heron hosts, each in its own network namespace with
# its own address, behind nginx (or HAProxy) in a third namespace, under a steady open-loop load
# from `heron attack`, while the hosts are restarted every way Heron knows:
#
#   baseline · rolling deploy (USR2 host 1, then USR2 host 2) · phased restart (USR1 host 1) ·
#   SIGKILL of host 2's master, then host 2 started again · tail
#
# Prints (and with --out writes) requests sent, answered 200, failed and p99 per phase, counted
# request by request from `heron attack --per-request` (request N was due at (N-1)/rate seconds).
#
#   sudo bundle exec ruby bench/scale_out.rb [--lb nginx|haproxy] [--rate 100] [--out FILE]
#
# Needs root (ip netns), iproute2, curl and nginx or haproxy (bin/setup installs them). The
# hosts run docs/deployment.md's config/heron.rb and the load balancer its nginx.conf or
# haproxy.cfg, read from the doc (bench/lib/deployment_configs.rb). The addresses, 10.77.1.0/24
# and 10.77.2.0/24, exist only inside the namespaces this script makes; it deletes them (and
# stops everything it started) when it ends, fails or is interrupted.
require "fileutils"
require "json"
require "optparse"
require "rbconfig"
require "time"
require "tmpdir"
require_relative "lib/clock"
require_relative "lib/deployment_configs"
require_relative "lib/proc_fs"
require_relative "lib/results_page"

Bench::ResultsPage.capture("scale_out.md") if $PROGRAM_NAME == __FILE__

ROOT = File.expand_path("..", __dir__)
HERON = File.join(ROOT, "exe/heron")

options = { lb: "nginx", rate: 100, out: nil }
OptionParser.new do |opts|
  opts.on("--lb NAME", %w[nginx haproxy]) { |v| options[:lb] = v }
  opts.on("--rate R", Integer) { |v| options[:rate] = v }
  opts.on("--out FILE") { |v| options[:out] = v }
end.parse!

# Runs a command, raising with its output when it fails.
def sh(*cmd)
  output = IO.popen(cmd, err: %i[child out], &:read)
  raise "#{cmd.join(' ')} failed: #{output}" unless $?.success?
  output
end

# The namespaces and veth pairs: lb <-> h1 on 10.77.1.0/24, lb <-> h2 on 10.77.2.0/24.
class Network
  attr_reader :lb, :hosts

  def initialize
    tag = (Process.pid % 100_000).to_s
    @lb = "heron-so-lb-#{tag}"
    @hosts = [1, 2].map { |i| { ns: "heron-so-h#{i}-#{tag}", veth: "hso#{tag}#{i}", address: "10.77.#{i}.2" } }
    @made = []
  end

  def create
    netns(@lb)
    @hosts.each_with_index { |host, i| link(host, i + 1) }
  end

  def destroy
    @made.reverse_each { |ns| system("ip", "netns", "del", ns, err: File::NULL) }
    @made.clear
  end

  private

  def netns(name)
    sh("ip", "netns", "add", name)
    @made << name
    sh("ip", "-n", name, "link", "set", "lo", "up")
  end

  def link(host, index)
    netns(host[:ns])
    peer = "#{host[:veth]}p"
    sh("ip", "link", "add", host[:veth], "netns", @lb, "type", "veth", "peer", "name", peer, "netns", host[:ns])
    sh("ip", "-n", @lb, "addr", "add", "10.77.#{index}.1/24", "dev", host[:veth])
    sh("ip", "-n", host[:ns], "addr", "add", "#{host[:address]}/24", "dev", peer)
    sh("ip", "-n", @lb, "link", "set", host[:veth], "up")
    sh("ip", "-n", host[:ns], "link", "set", peer, "up")
  end
end

# Processes this script started (each in its own process group), stopped by pid at the end.
class Processes
  def initialize = @groups = []

  def spawn(ns, *cmd, log:, chdir: Dir.pwd, env: {})
    pid = Process.spawn(env, "ip", "netns", "exec", ns, *cmd, chdir: chdir, out: log, err: %i[child out],
                                                              pgroup: true)
    @groups << pid
    pid
  end

  # Also the processes a hot restart started: they stay in the group of the one we spawned.
  def stop_all
    @groups.each { |group| signal("TERM", -group) }
    sleep 1
    @groups.each { |group| signal("KILL", -group) }
    @groups.each { |pid| Process.wait(pid, Process::WNOHANG) rescue nil }
  end

  def signal(name, pid)
    Process.kill(name, pid)
  rescue Errno::ESRCH, Errno::EPERM
    nil
  end
end

# One Heron host: its directory (config.ru, config/heron.rb from the doc, tmp/heron.pid, log).
class Host
  APP = <<~RUBY
    # 10 ms of work that yields (a database call, say), so requests are in flight at every restart.
    run ->(_env) { sleep 0.01; [200, { "content-type" => "text/plain" }, [Process.pid.to_s]] }
  RUBY
  # The doc's config binds the control listener to 0.0.0.0, which Heron refuses without a token.
  CONTROL_TOKEN = "scale-out-bench"

  attr_reader :name, :ns, :address, :log

  def initialize(name, spec, dir, processes)
    @name = name
    @ns = spec[:ns]
    @address = spec[:address]
    @dir = File.join(dir, name)
    @log = File.join(@dir, "heron.log")
    @processes = processes
    FileUtils.mkdir_p(File.join(@dir, "config"))
    FileUtils.mkdir_p(File.join(@dir, "tmp"))
    File.write(File.join(@dir, "config.ru"), APP)
    File.write(File.join(@dir, "config/heron.rb"), DeploymentConfigs.fetch("heron.rb"))
  end

  def start
    File.delete(pidfile) if File.exist?(pidfile)
    @processes.spawn(@ns, RbConfig.ruby, HERON, "-C", "config/heron.rb", "-e", "production", "-q", "config.ru",
                     log: [@log, "a"], chdir: @dir,
                     env: { "WEB_CONCURRENCY" => "2", "PORT" => "9292", "HERON_CONTROL_TOKEN" => CONTROL_TOKEN })
  end

  def pidfile = File.join(@dir, "tmp/heron.pid")

  def master
    pid = File.exist?(pidfile) ? File.read(pidfile).to_i : 0
    pid.positive? ? pid : nil
  end

  # `heron ctl stats` on the control address of config/heron.rb, inside the host's namespace.
  def stats
    out = IO.popen({ "HERON_CONTROL_TOKEN" => CONTROL_TOKEN }, ["ip", "netns", "exec", @ns, RbConfig.ruby, HERON, "ctl", "--control-url", "tcp://127.0.0.1:9393",
                    "stats"], err: File::NULL, &:read)
    $?.success? ? JSON.parse(out) : nil
  rescue JSON::ParserError
    nil
  end

  def ready?
    stats&.dig("status") == "ready"
  end
end

# The load balancer in its namespace, configured from docs/deployment.md.
class Balancer
  def initialize(kind, ns, dir, processes)
    @kind = kind
    @ns = ns
    @dir = File.join(dir, kind)
    @processes = processes
    FileUtils.mkdir_p(@dir)
  end

  def start
    log = File.join(@dir, "#{@kind}.log")
    if @kind == "nginx"
      File.write(conf = File.join(@dir, "nginx.conf"), DeploymentConfigs.nginx_conf(@dir))
      @processes.spawn(@ns, "nginx", "-c", conf, "-p", @dir, log: log)
    else
      File.write(conf = File.join(@dir, "haproxy.cfg"), DeploymentConfigs.fetch("haproxy.cfg"))
      @processes.spawn(@ns, "haproxy", "-db", "-f", conf, log: log)
    end
  end

  # Requests nginx retried on another host (its access log: more than one upstream status).
  def retries_between(from, to)
    path = File.join(@dir, "nginx-access.log")
    return nil unless File.exist?(path)
    File.foreach(path).count do |line|
      line.to_f.between?(from, to) && line[/"([^"]*)"\s*\z/, 1].to_s.include?(",")
    end
  end
end

# The scenario: the load, the restarts, the phases.
class ScaleOut
  def initialize(options)
    @options = options
    @dir = Dir.mktmpdir("heron-scale-out")
    @network = Network.new
    @processes = Processes.new
    @phases = []
  end

  def run
    setup
    attack = start_attack
    scenario
    Process.wait(attack)
    report
  ensure
    @processes.stop_all
    @network.destroy
    puts "logs and outputs kept in #{@dir}"
  end

  private

  def setup
    @network.create
    @hosts = @network.hosts.each_with_index.map { |spec, i| Host.new("host#{i + 1}", spec, @dir, @processes) }
    @hosts.each(&:start)
    @balancer = Balancer.new(@options[:lb], @network.lb, @dir, @processes)
    @balancer.start
    wait("both hosts ready") { @hosts.all?(&:ready?) }
    wait("the load balancer answers") { curl("http://127.0.0.1:8080/") == "200" }
  end

  def curl(url)
    IO.popen(["ip", "netns", "exec", @network.lb, "curl", "-s", "-o", "/dev/null", "-m", "2", "-w", "%{http_code}", url],
             err: File::NULL, &:read)
  end

  def wait(what, timeout: 60)
    deadline = Bench::Clock.now + timeout
    until yield
      raise "timed out waiting until #{what}" if Bench::Clock.now > deadline
      sleep 0.2
    end
  end

  DURATION = 75

  def start_attack
    @report = File.join(@dir, "attack.json")
    @requests = File.join(@dir, "requests.txt")
    pid = @processes.spawn(@network.lb, RbConfig.ruby, HERON, "attack", "http://127.0.0.1:8080/",
                           "--rate", @options[:rate].to_s, "--duration", DURATION.to_s, "--timeout", "30s",
                           "--per-request", "--json", @report, "--csv", File.join(@dir, "attack.csv"),
                           log: @requests)
    wait("the attack starts") { File.size?(@requests) }
    @t0 = Bench::Clock.now - 1.0 / @options[:rate] # the first line arrives about one request after the start
    pid
  end

  def scenario
    phase("baseline") { pause_until(8) }
    phase("rolling deploy (USR2 host 1, then host 2)") { @hosts.each { |host| hot_restart(host) } }
    phase("steady") { pause(4) }
    phase("phased restart (USR1 host 1)") { phased_restart(@hosts.first) }
    phase("steady") { pause(4) }
    phase("SIGKILL host 2's master, start it again") { kill_and_restart(@hosts.last) }
    phase("tail") { pause_until(DURATION) }
  end

  def phase(name)
    from = since_start
    yield
    pause(1) unless name == "tail" # the requests a change touched have completed
    @phases << { name: name, from: from, to: name == "tail" ? DURATION : since_start }
    warn format("%6.1fs  %s done", since_start, name)
  end

  def hot_restart(host)
    old = host.master
    Process.kill("USR2", old)
    wait("#{host.name}'s new master serves", timeout: 45) { host.master != old && gone?(old) && host.ready? }
  end

  def phased_restart(host)
    before = host.stats["worker_pids"]
    Process.kill("USR1", host.master)
    wait("#{host.name}'s workers are replaced", timeout: 45) do
      pids = host.stats&.dig("worker_pids") || []
      pids.size == before.size && (pids & before).empty? && before.all? { |pid| gone?(pid) }
    end
  end

  def kill_and_restart(host)
    workers = host.stats["worker_pids"]
    master = host.master
    Process.kill("KILL", master)
    wait("#{host.name}'s workers follow their master", timeout: 10) { ([master] + workers).all? { |pid| gone?(pid) } }
    pause(2) # the host is down: nginx finds out on the next connection it tries
    host.start
    wait("#{host.name} serves again", timeout: 45) { host.ready? }
  end

  def gone?(pid)
    Process.kill(0, pid)
    state = Bench::ProcFS.stat(pid)&.first # nil once it is gone
    state.nil? || state == "Z"
  rescue Errno::ESRCH
    true
  end

  def pause(seconds) = sleep(seconds)

  def pause_until(second)
    sleep([second - since_start, 0].max)
  end

  # @return [Float] seconds since the load began.
  def since_start = Bench::Clock.now - @t0

  def report
    results = File.readlines(@requests).filter_map do |line|
      m = line.match(/\Arequest (\d+) (?:status=(\d+)|error=(\S+)) latency=([\d.]+)ms/) or next
      { due: (m[1].to_i - 1).to_f / @options[:rate], ok: m[2] == "200", outcome: m[2] || m[3], ms: m[4].to_f }
    end
    summary = JSON.parse(File.read(@report))
    table = render(results, summary)
    puts table
    File.write(@options[:out], table) if @options[:out]
  end

  def render(results, summary)
    started = Time.parse(summary["started_at"]).to_f
    lines = ["| phase | seconds | sent | answered 200 | failed | p99 ms |#{' nginx retries |' if nginx?}",
             "|---|---|---|---|---|---|#{'---|' if nginx?}"]
    @phases.each do |phase|
      rows = results.select { |r| r[:due] >= phase[:from] && r[:due] < phase[:to] }
      lines << row(phase, rows, started)
    end
    lines << row({ name: "**all**", from: 0, to: DURATION }, results, started)
    failures = results.reject { |r| r[:ok] }.group_by { |r| r[:outcome] }.transform_values(&:size)
    lines << "" << "Failures by kind: #{failures.empty? ? 'none' : failures}" << ""
    lines << "heron attack's own count: sent #{summary.dig('requests', 'sent') || summary['sent']}, " \
             "report in #{@report}"
    lines.join("\n") + "\n"
  end

  def row(phase, rows, started)
    ok = rows.count { |r| r[:ok] }
    cells = [phase[:name], format("%.1f–%.1f", phase[:from], phase[:to]), rows.size, ok, rows.size - ok, p99(rows)]
    cells << @balancer.retries_between(started + phase[:from], started + phase[:to]) if nginx?
    "| #{cells.join(' | ')} |"
  end

  def nginx? = @options[:lb] == "nginx"

  def p99(rows)
    sorted = rows.map { |r| r[:ms] }.sort
    return "-" if sorted.empty?
    format("%.1f", sorted[(sorted.size * 0.99).ceil - 1])
  end
end

%w[INT TERM].each { |signal| trap(signal) { raise Interrupt } }
raise "run as root (ip netns needs it)" unless Process.uid.zero?
begin
  ScaleOut.new(options).run
rescue Interrupt
  warn "interrupted: everything this script started is stopped and its namespaces are deleted"
  exit 130
end
