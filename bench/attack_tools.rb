# frozen_string_literal: true

# One run, one hello-world server, three load generators: the highest rate `heron attack`
# sustains open loop (one process, then --processes 2), the highest rate httperf sustains open
# loop, and wrk's closed-loop rate. httperf opens sessions at a fixed rate, each a keep-alive
# connection with 10 calls one after the other (a new connection per request runs the machine
# out of ports in TIME_WAIT within seconds at these rates).
#
#   bundle exec ruby bench/attack_tools.rb [--server "CMD with {port}"] [--duration 5] [--tries 2]
#                                          [--out bench/results/attack_tools.md]
#
# "Sustained" is the same test for both open-loop tools: the achieved request rate is at least
# 99% of the target and nothing failed; for heron attack also its own lateness p99 <= 10 ms
# (httperf reports no lateness). The search doubles the rate from 250/s until a step fails, then
# bisects three times. Needs wrk and httperf (Debian packages).

require "uri"
require_relative "attack_capacity"

# Adds httperf and heron attack --processes 2 to {AttackCapacity}'s search and report.
class AttackTools < AttackCapacity
  CALLS = 10
  def initialize(argv)
    argv = argv.dup
    out = argv.index("--out") ? nil : File.join(ROOT, "bench/results/attack_tools.md")
    super(argv + (out ? ["--out", out] : []))
    @processes = 1
    @results = {}
  end

  private

  def measure(url, dir)
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
    system(RbConfig.ruby, *ATTACK, *args, chdir: ROOT, out: File::NULL, exception: true)
    report = JSON.parse(File.read(json))
    note(step_row(rate, report))
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
      out = `timeout #{(@duration * 3) + 15} #{command} 2>&1`
      achieved = out[/Request rate: ([\d.]+)/, 1].to_f
      errors = out[/Errors: total (\d+)/, 1].to_i
      ok = achieved >= 0.99 * rate && errors.zero? && out.include?("Total: connections")
      note([rate, achieved, out[/Reply time \[ms\]: response ([\d.]+)/, 1], "-", "-", "-", "-", errors,
            ok ? "yes" : "no", File.read("/proc/loadavg").split.first])
      ok
    end
  end

  def note(row)
    @steps << row
    puts "#{@processes} #{row.join(' ')}"
    $stdout.flush
  end

  def markdown
    summary = @results.map { |tool, (rate, _)| "| #{tool} | open | #{rate} |" }
    details = @results.map do |tool, (_, steps)|
      latency = tool.start_with?("httperf") ? "mean reply ms | - | - | -" : "corrected p50 ms | corrected p99 ms | uncorrected p99 ms | lateness p99 ms"
      "### #{tool}\n\n| target /s | achieved /s | #{latency} | generator CPU µs/request | errors | sustained | load (1 min) |\n" \
        "|---|---|---|---|---|---|---|---|---|---|\n#{steps.map { |row| "| #{row.join(' | ')} |" }.join("\n")}"
    end
    <<~MD
      # heron attack, httperf and wrk against one server, one run

      - Date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}
      - Machine: #{machine}; shared with other jobs: load average (1/5/15 min) at start #{@load_before}.
        The server and the load generator run on the same machine.
      - Server: `#{@server_command}`
      - Command: `bundle exec ruby bench/attack_tools.rb --duration #{@duration} --tries #{@tries}`
      - heron attack step: `heron attack URL --rate R --duration #{@duration} --processes N --json FILE`
      - httperf step: `#{@httperf_command}`: sessions start open loop at R/#{CALLS} per second; the #{CALLS} calls
        of a session go one after the other on its keep-alive connection.
      - Sustained: achieved rate >= 99% of the target, no errors (heron attack: also lateness p99 <= 10 ms),
        in one of up to #{@tries} attempts.

      | tool | loop | highest sustained rate /s |
      |---|---|---|
      #{summary.join("\n")}
      | `#{@wrk_command}` | closed | #{@wrk[:rate]} (p50 #{@wrk[:p50]}, p99 #{@wrk[:p99]}) |

      #{details.join("\n\n")}
    MD
  end
end

AttackTools.new(ARGV).run if $PROGRAM_NAME == __FILE__
