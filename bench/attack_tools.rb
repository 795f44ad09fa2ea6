# frozen_string_literal: true

# One run, one hello-world server, three load generators: the highest rate `heron attack`
# sustains open loop (one process, then --processes 2), the highest rate httperf sustains open
# loop, and wrk's closed-loop rate. httperf opens sessions at a fixed rate, each a keep-alive
# connection with 10 calls one after the other (a new connection per request runs the machine
# out of ports in TIME_WAIT within seconds at these rates).
#
#   bundle exec ruby bench/attack_tools.rb [--server "CMD with {port}" | --target nginx] [--duration 5]
#                                          [--tries 2] [--criterion issue|strict] [--out FILE]
#
# "Sustained" is the same test for both open-loop tools: the achieved request rate is at least
# 99% of the target and nothing failed; for heron attack also its own lateness: median under
# 1 ms (--criterion issue, the default: issue 18's test) or p99 <= 10 ms (--criterion strict)
# (httperf reports no lateness). The search doubles the rate from 250/s until a step fails, then
# bisects three times. Needs wrk and httperf (Debian packages).
#
# --target nginx serves `return 200 "hello"` from nginx (one worker, pinned to CPU 0 with
# taskset) instead of Heron's hello world, so the target costs little CPU and the question is
# only how fast the generators go. Every step also records the target's CPU per request (all
# processes of its process group, from /proc) and how many of the machine's cores were busy
# (from /proc/stat, every process on the machine): the evidence for whether the CPU was there.

require "uri"
require "etc"
require_relative "attack_capacity"
require_relative "lib/cpu_stat"
require_relative "lib/clock"
require_relative "lib/proc_fs"

# Adds httperf and heron attack --processes 2 to {AttackCapacity}'s search and report.
class AttackTools < AttackCapacity
  CALLS = 10
  NGINX_CONF = <<~CONF
    worker_processes 1;
    daemon off;
    pid %<dir>s/nginx.pid;
    error_log %<dir>s/nginx-error.log;
    events { worker_connections 20000; }
    http {
      access_log off;
      keepalive_requests 1000000;
      server {
        listen 127.0.0.1:%<port>d;
        location / { return 200 "hello"; }
      }
    }
  CONF

  def initialize(argv)
    argv = argv.dup
    @target = option(argv, "--target") || "heron"
    @paired = option(argv, "--paired")&.split(",")&.map { |rate| Integer(rate) }
    @rounds = Integer(option(argv, "--rounds") || 3)
    @criterion = option(argv, "--criterion") || "issue"
    out = argv.index("--out") ? nil : File.join(ROOT, "bench/results/attack_tools.md")
    super(argv + (out ? ["--out", out] : []))
    @processes = 1
    @results = {}
  end

  private

  def option(argv, name)
    at = argv.index(name) or return nil
    argv.slice!(at, 2).last
  end

  def with_server(dir, &block)
    return super unless @target == "nginx"
    port = free_port
    conf = File.join(dir, "nginx.conf")
    File.write(conf, format(NGINX_CONF, dir: dir, port: port))
    @server_command = "taskset -c 0 nginx -c CONF (1 worker, `return 200 \"hello\"`, keep-alive; NGINX_CONF in bench/attack_tools.rb)"
    @server_pid = Process.spawn("taskset", "-c", "0", "nginx", "-p", dir, "-c", conf, out: File::NULL, err: %i[child out], pgroup: true)
    abort "nginx did not come up" unless listening?(port)
    yield "http://127.0.0.1:#{port}/"
  ensure
    stop(@server_pid) if @server_pid
  end

  def sustained?(report)
    return super unless @criterion == "issue"
    achieved = report.dig("rate", "achieved").to_f
    achieved >= 0.99 * report.dig("rate", "target") && report.dig("lateness_ms", "p50") < 1 && report.dig("requests", "errors").zero?
  end

  # CPU seconds of every process in the target's process group (nginx's master and worker; Heron).
  def target_cpu = Bench::ProcFS.group_cpu_seconds(@server_pid)

  # Runs the block; returns its value, the target's CPU µs per request (or "-" without
  # requests), the machine's busy cores, and the cores other jobs used (busy cores minus what
  # the generator, a waited-for child, and the target used).
  def with_cpu(requests)
    cpu = target_cpu
    mine = Process.times
    before = Bench::CpuStat.sample
    started = Bench::Clock.now
    result = yield
    delta = Bench::CpuStat.sample.zip(before).map { |a, b| a - b }
    wall = Bench::Clock.now - started
    busy = Etc.nprocessors * (delta.sum - delta[3] - delta[4]) / delta.sum.to_f
    generator = Process.times.then { |t| t.cutime + t.cstime - mine.cutime - mine.cstime }
    target = target_cpu - cpu
    count = requests.call(result)
    [result, count.positive? ? (target * 1e6 / count).round(1) : "-", busy.round(2), (busy - ((generator + target) / wall)).round(2)]
  end

  # With --paired: the same rates for 1 and 2 processes, alternating, round after round, so both
  # meet the same machine.
  def paired(url, dir)
    @rounds.times do
      @paired.each do |rate|
        [1, 2].each do |processes|
          @processes = processes
          attack(url, rate, dir)
        end
      end
    end
    @results = { "paired" => [nil, @steps.dup] }
    @wrk = wrk(url)
  end

  def measure(url, dir)
    return paired(url, dir) if @paired
    [1, 2].each do |processes|
      @processes = processes
      super(url, dir)
      @results["heron attack, #{processes} process#{'es' if processes > 1}"] = [@capacity, @steps.dup]
    end
    @processes = "httperf"
    @results["httperf, sessions of #{CALLS} calls"] = httperf_capacity(url)
  end

  def attack(url, rate, dir)
    json = File.join(dir, "run-#{rate}.json")
    args = [url, "--rate", rate.to_s, "--duration", @duration.to_s, "--processes", @processes.to_s, "--json", json]
    report, *cpu = with_cpu(->(r) { r.dig("requests", "sent") }) do
      system(RbConfig.ruby, *ATTACK, *args, chdir: ROOT, out: File::NULL, exception: true)
      JSON.parse(File.read(json))
    end
    row = step_row(rate, report)
    note(row.insert(5, report.dig("lateness_ms", "p50")).insert(-2, *cpu).unshift(@processes))
    report
  end

  def httperf_capacity(url)
    @steps = []
    pass = 0
    fail = nil
    rate = 250
    while rate <= 32_000
      unless httperf_sustains?(url, rate)
        fail = rate
        break
      end
      pass = rate
      rate *= 2
    end
    3.times do
      break if fail.nil? || fail - pass <= pass * 0.05
      mid = ((pass + fail) / 2.0).round(-1)
      httperf_sustains?(url, mid) ? pass = mid : fail = mid
    end
    [pass, @steps.dup]
  end

  def httperf_sustains?(url, rate)
    uri = URI(url)
    @httperf_command = "httperf --hog --server #{uri.host} --port #{uri.port} --uri #{uri.path} " \
                       "--rate R/#{CALLS} --num-conns R*#{@duration}/#{CALLS} --num-calls #{CALLS} --timeout 5"
    @tries.times.any? do
      command = @httperf_command.gsub("R/#{CALLS}", (rate / CALLS.to_f).to_s).gsub("R*#{@duration}/#{CALLS}", (rate * @duration / CALLS).to_s)
      out, *cpu = with_cpu(->(o) { o[/Total: connections \d+ requests (\d+)/, 1].to_i }) { `timeout #{(@duration * 3) + 15} #{command} 2>&1` }
      achieved = out[/Request rate: ([\d.]+)/, 1].to_f
      errors = out[/Errors: total (\d+)/, 1].to_i
      ok = achieved >= 0.99 * rate && errors.zero? && out.include?("Total: connections")
      note(["-", rate, achieved, out[/Reply time \[ms\]: response ([\d.]+)/, 1], "-", "-", "-", "-", "-", errors,
            ok ? "yes" : "no", *cpu, Bench::ProcFS.load_averages.first])
      ok
    end
  end

  def note(row)
    @steps << row
    puts row.join(" ")
    $stdout.flush
  end

  # One line per rate and process count over the --paired rounds: rounds sustained, and medians.
  def paired_summary
    @steps.group_by { |row| row.first(2) }.map do |(processes, rate), rows|
      median = ->(i) { rows.map { |row| row[i] }.grep(Numeric).sort[rows.size / 2] }
      "| #{processes} | #{rate} | #{rows.count { |row| row[10] == 'yes' }} of #{rows.size} | " \
        "#{[2, 6, 8, 11, 13].map { |i| median.call(i) }.join(' | ')} |"
    end
  end

  def paired_markdown
    <<~MD
      ## Paired: 1 and 2 processes at the same rates, alternating (#{@rounds} rounds)

      | processes | target /s | sustained | achieved /s | lateness p50 ms | generator CPU µs/request | #{@target} CPU µs/request | other jobs' cores |
      |---|---|---|---|---|---|---|---|
      #{paired_summary.join("\n")}

      (medians over the rounds)
    MD
  end

  def markdown
    summary = @results.map { |tool, (rate, _)| "| #{tool} | open | #{rate} |" }
    details = @results.map do |tool, (_, steps)|
      latency = tool.start_with?("httperf") ? "mean reply ms | - | - | - | -" : "corrected p50 ms | corrected p99 ms | uncorrected p99 ms | lateness p50 ms | lateness p99 ms"
      "### #{tool}\n\n| processes | target /s | achieved /s | #{latency} | generator CPU µs/request | errors | sustained | " \
        "#{@target} CPU µs/request | busy cores (of #{Etc.nprocessors}, whole machine) | other jobs' cores | load (1 min) |\n" \
        "|#{'---|' * 15}\n#{steps.map { |row| "| #{row.join(' | ')} |" }.join("\n")}"
    end
    <<~MD
      # heron attack, httperf and wrk against one server, one run

      - Date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}
      - Machine: #{machine}; shared with other jobs: load average (1/5/15 min) at start #{@load_before}.
        The server and the load generator run on the same machine.
      - Server: `#{@server_command}`
      - Command: `bundle exec ruby bench/attack_tools.rb --target #{@target} --criterion #{@criterion} --duration #{@duration} --tries #{@tries}#{" --paired #{@paired.join(',')} --rounds #{@rounds}" if @paired}`
      - heron attack step: `heron attack URL --rate R --duration #{@duration} --processes N --json FILE`
      #{"- httperf step: `#{@httperf_command}`: sessions start open loop at R/#{CALLS} per second; the #{CALLS} calls
  of a session go one after the other on its keep-alive connection." unless @paired}
      - Sustained: achieved rate >= 99% of the target, no errors (heron attack: also #{@criterion == 'issue' ? 'lateness p50 < 1 ms, issue 18\'s test' : 'lateness p99 <= 10 ms'}),
        in one of up to #{@tries} attempts.

      #{paired_markdown if @paired}
      | tool | loop | highest sustained rate /s |
      |---|---|---|
      #{summary.join("\n") unless @paired}
      | `#{@wrk_command}` | closed | #{@wrk[:rate]} (p50 #{@wrk[:p50]}, p99 #{@wrk[:p99]}) |

      #{details.join("\n\n")}
    MD
  end
end

AttackTools.new(ARGV).run if $PROGRAM_NAME == __FILE__
