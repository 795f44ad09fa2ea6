# frozen_string_literal: true

# Measures the highest request rate one `heron attack` generator process sustains against a
# hello-world server, and wrk's closed-loop rate against the same server in the same run.
#
#   bundle exec ruby bench/attack_capacity.rb [--server "CMD with {port}"] [--duration 5]
#                                             [--tries 2] [--out bench/results/attack_capacity.md]
#
# Without --server it starts Heron (`bundle exec exe/heron -p PORT bench/hello.ru`) and falls back
# to Puma when Heron does not come up. A rate is "sustained" when the achieved rate is within 1%
# of the target, the generator's p99 lateness is at most 10 ms and no request failed, in at
# least one of --tries attempts (other jobs on a shared machine can starve a single attempt).

require "json"
require "optparse"
require "socket"
require "tmpdir"
require "etc"
require_relative "lib/options"
require_relative "lib/report_file"
require_relative "lib/heron_attack"
require_relative "lib/machine"
require_relative "lib/proc_fs"

# Runs the capacity search and writes the markdown report.
class AttackCapacity
  ROOT = File.expand_path("..", __dir__)
  HELLO = "run ->(_env) { [200, { \"content-type\" => \"text/plain\" }, [\"Hello, world!\"]] }\n"

  def initialize(argv)
    @duration = 5
    @tries = 2
    @out = File.join(ROOT, "bench/results/attack_capacity.md")
    @server = nil
    OptionParser.new do |o|
      o.on("--server CMD", "server command; {port} and {app} are replaced") { |v| @server = v }
      o.on("--duration SECONDS", Integer, "seconds per rate step (default 5)") { |v| @duration = v }
      o.on("--tries N", Integer, "attempts per rate before it counts as not sustained (default 2)") { |v| @tries = v }
      Bench::Options.out(o) { |path| @out = path }
    end.parse!(argv)
    @steps = []
  end

  def run
    Dir.mktmpdir do |dir|
      @app = File.exist?(File.join(ROOT, "bench/hello.ru")) ? "bench/hello.ru" : File.join(dir, "hello.ru").tap { |p| File.write(p, HELLO) }
      @load_before = Bench::Machine.load
      with_server(dir) { |url| measure(url, dir) }
    end
    Bench::ReportFile.publish(@out, markdown)
  end

  private

  def candidates
    return [@server] if @server
    ["bundle exec exe/heron -q -e production -p {port} {app}",
     "bundle exec puma -q -e production -t 4:4 -b tcp://127.0.0.1:{port} {app}"]
  end

  def with_server(dir)
    candidates.each do |template|
      port = free_port
      command = template.gsub("{port}", port.to_s).gsub("{app}", @app)
      pid = Process.spawn(command, chdir: ROOT, out: File.join(dir, "server.log"), err: [:child, :out], pgroup: true)
      next give_up(pid, command, dir) unless listening?(port)
      @server_command = command
      @server_pid = pid
      return yield "http://127.0.0.1:#{port}/"
    ensure
      stop(pid) if pid
    end
    abort "no server came up (tried: #{candidates.join(' | ')})"
  end

  def measure(url, dir)
    attack(url, 200, dir) # warm-up (connections, JIT-less caches), not reported
    @steps.clear
    pass, fail = ramp(url, dir)
    3.times do
      break if fail.nil? || fail - pass <= pass * 0.05
      mid = ((pass + fail) / 2.0).round(-1)
      sustains?(url, mid, dir) ? pass = mid : fail = mid
    end
    @capacity = pass
    @wrk = wrk(url)
  end

  def ramp(url, dir)
    pass = 0
    rate = 250
    while rate <= 32_000
      return [pass, rate] unless sustains?(url, rate, dir)
      pass = rate
      rate *= 2
    end
    [pass, nil]
  end

  def sustains?(url, rate, dir)
    @tries.times.any? { sustained?(attack(url, rate, dir)) }
  end

  def attack(url, rate, dir)
    report = Bench::HeronAttack.report([url, "--rate", rate.to_s, "--duration", @duration.to_s], json: File.join(dir, "run-#{rate}.json"))
    @steps << step_row(rate, report)
    report
  end

  def sustained?(report)
    achieved = report.dig("rate", "achieved").to_f
    achieved >= 0.99 * report.dig("rate", "target") && report.dig("lateness_ms", "p99") <= 10 &&
      report.dig("requests", "errors").zero?
  end

  def step_row(rate, report)
    [rate, report.dig("rate", "achieved"), report.dig("latency_ms", "corrected", "p50"),
     report.dig("latency_ms", "corrected", "p99"), report.dig("latency_ms", "uncorrected", "p99"),
     report.dig("lateness_ms", "p99"), report.dig("generator", "cpu_us_per_request"),
     report.dig("requests", "errors"), sustained?(report) ? "yes" : "no",
     Bench::ProcFS.load_averages.first]
  end

  def wrk(url)
    @wrk_command = "wrk -t1 -c16 -d#{@duration}s --latency #{url}"
    output = `#{@wrk_command}`
    { rate: output[/Requests\/sec:\s+([\d.]+)/, 1], p50: output[/^\s+50%\s+(\S+)/, 1], p99: output[/^\s+99%\s+(\S+)/, 1] }
  end

  def give_up(pid, command, dir)
    stop(pid)
    warn "server did not come up: #{command}\n#{File.read(File.join(dir, 'server.log')).lines.last(5).join}"
  end

  def free_port
    TCPServer.open("127.0.0.1", 0) { |server| server.addr[1] }
  end

  def listening?(port)
    200.times do
      return true if (TCPSocket.new("127.0.0.1", port).close || true)
    rescue SystemCallError
      sleep 0.1
    end
    false
  end

  def stop(pid)
    Process.kill(:TERM, -pid)
    Process.wait(pid)
  rescue SystemCallError
    nil
  end

  def machine = Bench::Machine.summary

  def markdown
    rows = @steps.map { |row| "| #{row.join(' | ')} |" }
    <<~MD
      # heron attack: capacity of one generator process

      - Date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}
      - Machine: #{machine}
      - Load average (1/5/15 min) at start: #{@load_before}; the server, the generator and wrk share the machine.
      - Server: `#{@server_command}`
      - Command: `bundle exec ruby bench/attack_capacity.rb#{" --server '#{@server}'" if @server} --duration #{@duration} --tries #{@tries}`
      - Each step: `heron attack URL --rate R --duration #{@duration} --json FILE` (one process, no connection cap).
        Sustained = achieved rate >= 99% of target, generator lateness p99 <= 10 ms, no errors, in one of up to #{@tries} attempts.

      | target /s | achieved /s | corrected p50 ms | corrected p99 ms | uncorrected p99 ms | lateness p99 ms | generator CPU µs/request | errors | sustained | load (1 min) |
      |---|---|---|---|---|---|---|---|---|---|
      #{rows.join("\n")}

      **Highest sustained rate, one generator process: #{@capacity}/s.**

      wrk, closed loop, same server, same run: `#{@wrk_command}` → #{@wrk[:rate]} requests/s
      (p50 #{@wrk[:p50]}, p99 #{@wrk[:p99]}, latency measured from each send, so queueing is not counted).
    MD
  end
end

AttackCapacity.new(ARGV).run if $PROGRAM_NAME == __FILE__
