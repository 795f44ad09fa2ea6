# frozen_string_literal: true

# Does `heron attack` measure what independent generators measure? One nginx (one worker,
# pinned to CPU 0) serves two targets: a small static file, and `echo_sleep 0.05` (nginx's echo
# module: every response waits a known 50 ms on a timer, at no CPU cost). At each rate (default
# 1,000, 5,000 and 20,000/s) each generator in turn, pinned to CPU 1 (one core, not the
# target's), offers the rate open loop for --duration seconds:
#
# - heron attack: `--rate R --duration D`, one process; latency from the send (uncorrected,
#   what the others measure) and from the due time (corrected). It runs twice, once as each
#   other tool loads the server: with `--no-keepalive` (a connection per request) beside h2load,
#   with keep-alive beside httperf.
# - h2load --h1 -r: R/100 new connections every 10 ms, one request each (open loop); latency
#   from each request's send, from its per-request log; its rate is requests ÷ (last start −
#   first start + 10 ms), the batches' own period. (With a 1 ms period h2load lost whole
#   periods whenever its process woke late on a busy machine: 944/s of 1,000 at best.)
# - httperf: sessions of 10 keep-alive calls started open loop at R/10 per second (as in
#   bench/attack_tools.rb). httperf reports only the mean reply time, no percentiles; it is
#   compared on rate and mean. (Debian's httperf; a row says so when it is not installed.)
#
# A row agrees when heron attack's achieved rate is within RATE_TOLERANCE of the other tool's,
# and its p50 and p99 (uncorrected) within the target's TOLERANCES of the other tool's (h2load)
# or its mean within the p50 tolerance (httperf). A generator that could not keep up (lateness
# p99 over 10 ms, or achieved below 99% of the target) is marked: where one core does not allow
# the rate, the figures describe the generator, not nginx.
#
#   bundle exec ruby bench/attack_accuracy.rb [--rates 1000,5000,20000] [--duration 5] [--only file,sleep] [--no-pin]

require "json"
require "optparse"
require "tmpdir"
require "fileutils"
require "uri"
require_relative "attack_capacity"
require_relative "lib/results_page"
require_relative "lib/machine"
require_relative "lib/heron_attack"
require_relative "lib/options"
require_relative "lib/cpu_stat"

# Runs every generator against both targets at every rate and writes the comparison table.
class AttackAccuracy < AttackCapacity
  CALLS = 10
  HTTPERF_MISSING = { tool: "httperf", missing: "not installed (Debian's httperf; bin/setup installs it)" }.freeze
  RATE_TOLERANCE = 0.02
  # [absolute ms, relative] for p50 and p99: two figures agree when they differ by at most the
  # larger of the two. The tail of a shared 2-core machine moves by more than its median.
  TOLERANCES = { "file" => { "p50" => [0.5, 0.25], "p99" => [2.0, 0.5] },
                 "sleep" => { "p50" => [1.0, 0.02], "p99" => [5.0, 0.1] } }.freeze
  PATHS = { "file" => "/small.txt", "sleep" => "/sleep" }.freeze
  ECHO_MODULE = "/usr/lib/nginx/modules/ngx_http_echo_module.so"
  NGINX = ENV.fetch("NGINX", "/usr/sbin/nginx")
  CONF = <<~CONF
    load_module %<echo>s;
    worker_processes 1;
    worker_rlimit_nofile 65536;
    daemon off;
    pid %<dir>s/nginx.pid;
    error_log %<dir>s/nginx-error.log;
    events { worker_connections 60000; }
    http {
      access_log off;
      keepalive_requests 1000000;
      server {
        listen 127.0.0.1:%<port>d backlog=4096;
        root %<dir>s/www;
        location = /sleep { echo_sleep 0.05; echo "slept"; }
      }
    }
  CONF

  def initialize(argv)
    @rates = [1000, 5000, 20_000]
    @duration = 5
    @only = PATHS.keys
    OptionParser.new do |o|
      Bench::Options.rates(o, @rates) { |rates| @rates = rates }
      o.on("--duration SECONDS", Integer, "seconds per run (default 5)") { |v| @duration = v }
      Bench::Options.only(o, PATHS.keys) { |names| @only = names & PATHS.keys }
      o.on("--no-pin", "leave the generators free to run on any CPU (for a machine whose CPU 1 other jobs hold)") { @pin = [] }
    end.parse!(argv)
    @rows = []
  end

  def run
    Dir.mktmpdir do |dir|
      with_nginx(dir) do |base|
        @only.each { |target| @rates.each { |rate| compare(target, "#{base}#{PATHS.fetch(target)}", rate, dir) } }
      end
    end
    puts markdown
  end

  private

  def with_nginx(dir)
    abort "nginx's echo module is missing (#{ECHO_MODULE}: Debian's libnginx-mod-http-echo)" unless File.exist?(ECHO_MODULE)
    FileUtils.mkdir_p(File.join(dir, "www"))
    File.chmod(0o755, dir) # nginx's worker runs as another user
    File.write(File.join(dir, "www/small.txt"), "#{'x' * 99}\n")
    port = free_port
    File.write(File.join(dir, "nginx.conf"), format(CONF, echo: ECHO_MODULE, dir: dir, port: port))
    @server_pid = Process.spawn("taskset", "-c", "0", NGINX, "-p", dir, "-c", File.join(dir, "nginx.conf"),
                                out: File::NULL, err: %i[child out], pgroup: true)
    abort "nginx did not come up: #{File.read(File.join(dir, 'nginx-error.log'))}" unless listening?(port)
    yield "http://127.0.0.1:#{port}"
  ensure
    stop(@server_pid) if @server_pid
  end

  # One run of each generator at the rate, then a row per pairing: h2load beside heron attack
  # with --no-keepalive (the same connection per request) and with keep-alive (the same
  # arrivals, connections reused), httperf beside keep-alive.
  def compare(target, url, rate, dir)
    h2load = busy { h2load(url, rate, dir) }
    closing = busy { heron_attack(url, rate, dir, ["--no-keepalive"]) }
    keeping = busy { heron_attack(url, rate, dir, []) }
    emit(target, rate, "h2load / heron --no-keepalive", closing, h2load)
    emit(target, rate, "h2load / heron keep-alive", keeping, h2load)
    emit(target, rate, "httperf / heron keep-alive", keeping, httperf? ? busy { httperf(url, rate, dir) } : [HTTPERF_MISSING, "-"])
  end

  def emit(target, rate, pairing, (heron, heron_busy), (other, other_busy))
    @rows << [target, rate, pairing, *figures(target, heron, other), "#{heron_busy} / #{other_busy}"]
    puts @rows.last.join(" ")
    $stdout.flush
  end

  # Runs the block; returns its value and how many of the machine's cores were busy meanwhile
  # (every process on it, from /proc/stat): the evidence of what else was running.
  def busy
    before = Bench::CpuStat.sample
    result = yield
    delta = Bench::CpuStat.sample.zip(before).map { |a, b| a - b }
    [result, (Etc.nprocessors * (delta.sum - delta[3] - delta[4]) / delta.sum.to_f).round(2)]
  end

  def heron_attack(url, rate, dir, flags)
    json = File.join(dir, "heron.json")
    @heron_command = "#{pin.join(' ')} heron attack URL --rate R --duration #{@duration} [--no-keepalive] --json FILE"
    system(*pin, RbConfig.ruby, *Bench::HeronAttack::RUBY_ARGS, url, "--rate", rate.to_s, "--duration", @duration.to_s, *flags, "--json", json,
           chdir: ROOT, out: File::NULL, exception: true)
    report = JSON.parse(File.read(json))
    uncorrected = report.dig("latency_ms", "uncorrected")
    { achieved: report.dig("rate", "achieved"), p50: uncorrected["p50"], p99: uncorrected["p99"], mean: uncorrected["mean"],
      corrected_p99: report.dig("latency_ms", "corrected", "p99"), lateness_p99: report.dig("lateness_ms", "p99"),
      errors: report.dig("requests", "sent") - report.dig("requests", "ok"),
      kept_up: report.dig("lateness_ms", "p99") <= 10 && report.dig("rate", "achieved").to_f >= 0.99 * rate,
      shares_core: report["warnings"].any? { |w| w.include?("shares") } }
  end

  def h2load(url, rate, dir)
    log = File.join(dir, "h2load.log")
    File.delete(log) if File.exist?(log)
    total = rate * @duration
    @h2load_command = "#{pin.join(' ')} h2load --h1 -r R/100 --rate-period 10ms -c R*#{@duration} -n R*#{@duration} -T 10 --log-file FILE URL"
    output = IO.popen([*pin, "h2load", "--h1", "-r", (rate / 100).to_s, "--rate-period", "10ms", "-c", total.to_s,
                       "-n", total.to_s, "-T", "10", "--log-file", log, url], err: %i[child out], &:read)
    lines = File.exist?(log) ? File.readlines(log).map { |line| line.split.map(&:to_i) } : []
    return { tool: "h2load", missing: "no log: #{output.lines.last(2).join.strip}" } if lines.size < 2
    h2load_figures(lines, output)
  end

  def h2load_figures(lines, output)
    durations = lines.map(&:last).sort
    starts = lines.map(&:first).minmax
    at = ->(p) { (durations[((durations.size - 1) * p).round] / 1000.0).round(3) }
    { tool: "h2load", achieved: (lines.size / (((starts[1] - starts[0]) / 1e6) + 0.01)).round(1), p50: at.call(0.5), p99: at.call(0.99),
      mean: (durations.sum / durations.size / 1000.0).round(3),
      errors: output[/(\d+) failed/, 1].to_i + lines.count { |_, status, _| status != 200 } }
  end

  # The generators' CPU: 1, the one nginx is not on (none with --no-pin).
  def pin = @pin || %w[taskset -c 1]

  def httperf?
    @httperf = system("which httperf > /dev/null 2>&1") if @httperf.nil?
    @httperf
  end

  def httperf(url, rate, _dir)
    uri = URI(url)
    @httperf_command = "#{pin.join(' ')} httperf --hog --server #{uri.host} --port #{uri.port} --uri #{uri.path} " \
                       "--rate R/#{CALLS} --num-conns R*#{@duration}/#{CALLS} --num-calls #{CALLS} --timeout 5"
    out = `#{pin.join(" ")} httperf --hog --server #{uri.host} --port #{uri.port} --uri #{uri.path} --rate #{rate / CALLS.to_f} \
           --num-conns #{rate * @duration / CALLS} --num-calls #{CALLS} --timeout 5 2>&1`
    { tool: "httperf", achieved: out[/Request rate: ([\d.]+)/, 1].to_f, mean: out[/Reply time \[ms\]: response ([\d.]+)/, 1].to_f,
      errors: out[/Errors: total (\d+)/, 1].to_i }
  end

  def agree?(target, metric, heron, other)
    absolute, relative = TOLERANCES.fetch(target).fetch(metric)
    (heron - other).abs <= [absolute, relative * other].max
  end

  # heron attack's and the other tool's figures side by side, and whether they agree.
  def figures(target, heron, other)
    return ["-"] * 8 + [other[:missing]] if other[:missing]
    rate_ok = (heron[:achieved].to_f - other[:achieved]).abs <= RATE_TOLERANCE * other[:achieved]
    checks = other[:p50] ? %w[p50 p99].map { |m| agree?(target, m, heron[m.to_sym], other[m.to_sym]) } : [agree?(target, "p50", heron[:mean], other[:mean])]
    [pair(heron[:achieved], other[:achieved]), pair(heron[:p50], other[:p50]), pair(heron[:p99], other[:p99]),
            pair(heron[:mean], other[:mean]), heron[:corrected_p99], heron[:lateness_p99], "#{heron[:errors]}/#{other[:errors]}",
            heron[:kept_up] ? "yes" : "no", verdict(rate_ok, checks, heron)]
  end

  def pair(mine, theirs) = theirs.nil? ? "#{mine} / -" : "#{mine} / #{theirs}"

  def verdict(rate_ok, checks, heron)
    return "agrees" if rate_ok && checks.all?
    reason = [("rate" unless rate_ok), ("latency" unless checks.all?)].compact.join(" and ")
    "differs (#{reason})#{' - heron attack fell behind' unless heron[:kept_up]}"
  end

  def markdown
    tolerances = TOLERANCES.map do |target, t|
      "#{target}: p50 within #{t['p50'][0]} ms or #{(t['p50'][1] * 100).round}%, p99 within #{t['p99'][0]} ms or #{(t['p99'][1] * 100).round}%"
    end
    <<~MD
      # heron attack against h2load and httperf

      - Date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}; machine: #{machine}; load average at the end #{Bench::Machine.load}
      - Target: `taskset -c 0 nginx` (one worker; NGINX CONF in bench/attack_accuracy.rb): `/small.txt` (100 bytes) and `/sleep` (`echo_sleep 0.05`)
      - heron attack: `#{@heron_command}` (one process; `--no-keepalive` in the h2load rows, a connection per request as h2load's; keep-alive in the httperf rows)
      - h2load: `#{@h2load_command}` (a connection per request, opened open loop)
      - httperf: `#{@httperf_command || "#{pin.join(' ')} httperf --rate R/#{CALLS} --num-calls #{CALLS} ..."}` (sessions of #{CALLS} keep-alive calls)
      - Agreement: achieved rate within #{(RATE_TOLERANCE * 100).round}%; #{tolerances.join('; ')} (httperf: mean reply time, p50's tolerance)

      | target | rate /s | tools (other / heron attack) | achieved /s (heron / other) | p50 ms | p99 ms | mean ms | heron corrected p99 ms | heron lateness p99 ms | failed (heron/other) | heron kept up | verdict | busy cores of #{Etc.nprocessors} (heron run / other run) |
      |---|---|---|---|---|---|---|---|---|---|---|---|---|
      #{@rows.map { |r| "| #{r.join(' | ')} |" }.join("\n")}
    MD
  end
end

if $PROGRAM_NAME == __FILE__
  Bench::ResultsPage.capture("attack_accuracy.md")
  AttackAccuracy.new(ARGV).run
end
