# frozen_string_literal: true

# What `early_hints` costs a request: objects allocated per request by an in-process Heron
# serving a hello-world app over HTTP/1.1 keep-alive (wrk, 4 connections), with the setting off,
# on (the env gets a `rack.early_hints` callable that the app does not call), and on with the
# app sending one `103 Early Hints` per request. Requests per second are printed too, but on a
# shared 2-CPU machine they say little; the allocation count does not depend on load.
#
#   bundle exec ruby bench/early_hints.rb [--seconds 5]   # writes bench/results/early_hints.md
require "optparse"
require "stringio"
require "etc"
require_relative "../lib/heron"
require_relative "lib/clock"
require_relative "lib/proc_fs"

seconds = 5
OptionParser.new { |o| o.on("--seconds N", Integer) { |n| seconds = n } }.parse!(ARGV)
abort "wrk is not installed" unless system("command -v wrk >/dev/null")

# One server, one wrk run: [objects allocated per request, requests, requests/s]. The rate is
# the app's count over the run, not wrk's: wrk counts each 103 as a response of its own.
def measure(early_hints, send_hint, seconds)
  count = 0
  app = lambda do |env|
    count += 1
    env["rack.early_hints"].call("link" => "</app.css>; rel=preload; as=style") if send_hint
    [200, { "content-type" => "text/plain" }, ["ok"]]
  end
  config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], log_io: StringIO.new, error_io: StringIO.new, quiet: true,
                                    early_hints: early_hints, profile: false, metrics: false, control_bind: nil)
  server = Heron::Server.new(app, config)
  server.bind
  thread = Thread.new { server.run }
  server.wait_until_running(5)
  url = "http://127.0.0.1:#{server.bound_ports.first}/"
  system("wrk -t1 -c4 -d1s #{url} > /dev/null") # warm-up
  GC.start
  allocated, served = GC.stat(:total_allocated_objects), count
  elapsed = Bench::Clock.elapsed { system("wrk -t1 -c4 -d#{seconds}s #{url} > /dev/null") }
  requests = count - served
  [(GC.stat(:total_allocated_objects) - allocated).fdiv(requests), requests, requests / elapsed]
ensure
  server&.stop
  thread&.join
end

load = Bench::ProcFS.load_averages.join(" ")
rows = { "off" => [false, false], "on, not called" => [true, false], "on, one 103 per request" => [true, true] }.map do |name, (on, send)|
  allocated, requests, rate = measure(on, send, seconds)
  shown = send ? "n/a (wrk reads the 103 as the response and sends its next request early)" : rate.round
  "| #{name} | #{allocated.round(2)} | #{requests} | #{shown} |"
end
report = <<~MD
  # early_hints: objects allocated per request

  - Date: #{Time.now.utc.strftime('%Y-%m-%d %H:%M UTC')}
  - Machine: #{Etc.nprocessors} CPUs, #{RUBY_DESCRIPTION}; load average at start: #{load} (shared machine)
  - Command: `bundle exec ruby bench/early_hints.rb --seconds #{seconds}` (in-process server, `wrk -t1 -c4 -d#{seconds}s`, hello world)

  | early_hints | objects allocated per request (server process) | requests | requests/s (noisy here) |
  |---|---|---|---|
  #{rows.join("\n")}
MD
File.write(File.expand_path("results/early_hints.md", __dir__), report)
puts report
