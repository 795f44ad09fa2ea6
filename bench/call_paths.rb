# frozen_string_literal: true

# How far one keep-alive HTTP/1.1 request travels through Heron's code (issue 29's "done when"):
# starts an in-process server (one reactor thread, hello world, the access log to /dev/null),
# sends warm-up requests on one keep-alive connection, then for each measured request counts,
# with TracePoint, from writing the request until the server is done with it:
#
# - files entered: the distinct files under lib/ whose Ruby methods ran;
# - calls: Ruby method calls into lib/, and of them the cross-file ones (the calling frame is
#   in another file: another lib file, the app, or Ruby's own code);
# - C calls made from lib/ (methods written in C: IO, String, Hash, ... and Heron's C parser).
#
# Blocks are not counted. The figures can vary between requests (a timer firing in the
# window); the median of `--requests` is reported with the least and the most.
#
#   bundle exec ruby bench/call_paths.rb [--requests 7] [--warmup 50]
#   HERON_ROOT=/work/main bundle exec ruby bench/call_paths.rb   # the same against another checkout

require "optparse"
require "socket"
require_relative "lib/results_page"

ROOT = File.expand_path(ENV.fetch("HERON_ROOT", File.expand_path("..", __dir__)))
LIB = File.join(ROOT, "lib", "")
$LOAD_PATH.unshift(File.join(ROOT, "lib")) # before the bundle's copy, for another checkout
require File.join(ROOT, "lib/heron")

# Counts one traced window: which lib files ran, which calls crossed files.
class CallCount
  # @return [Hash{String => Integer}] calls per lib file entered.
  attr_reader :files
  # @return [Hash{Array(String, String) => Integer}] cross-file calls per [caller file, callee file].
  attr_reader :edges
  # @return [Integer] Ruby method calls into lib/.
  attr_reader :calls
  # @return [Integer] C method calls made from lib/.
  attr_reader :c_calls

  def initialize
    @files = Hash.new(0)
    @edges = Hash.new(0)
    @calls = 0
    @c_calls = 0
  end

  # Runs the block with the count on.
  # @return [CallCount] self
  def trace(&block)
    TracePoint.new(:call, :c_call) { |tp| note(tp) }.enable(&block)
    self
  end

  # @return [Integer] calls whose caller is in another file.
  def cross_file = @edges.values.sum

  private

  def note(tp)
    return unless tp.path&.start_with?(LIB)
    return @c_calls += 1 if tp.event == :c_call
    @calls += 1
    @files[tp.path] += 1
    from = caller_locations(3, 1).first&.path.to_s # [0] the hook block, [1] the callee, [2] its caller
    @edges[[from, tp.path]] += 1 unless from == tp.path
  end
end

# One keep-alive connection to an in-process Heron.
class KeepAliveClient
  REQUEST = "GET / HTTP/1.1\r\nHost: bench\r\nUser-Agent: call_paths\r\nAccept: */*\r\n\r\n"

  def initialize(port)
    @socket = TCPSocket.new("127.0.0.1", port)
    @buffer = +""
  end

  # Sends a request and reads its whole response.
  # @return [String] the response's head.
  def request
    @socket.write(REQUEST)
    head = read_until_head
    read_body(Integer(head[/^content-length: *(\d+)/i, 1]))
    head
  end

  def close = @socket.close

  private

  def read_until_head
    @buffer << @socket.readpartial(16_384) until @buffer.include?("\r\n\r\n")
    head, @buffer = @buffer.split("\r\n\r\n", 2)
    head
  end

  def read_body(length)
    @buffer << @socket.readpartial(16_384) while @buffer.bytesize < length
    @buffer = @buffer.byteslice(length..)
  end
end

options = { requests: 7, warmup: 50 }
OptionParser.new do |o|
  o.on("--requests N", Integer, "measured requests (the median is reported)") { |n| options[:requests] = n }
  o.on("--warmup N", Integer, "requests before measuring") { |n| options[:warmup] = n }
end.parse!(ARGV)
Bench::ResultsPage.capture("call_paths.md")

app = ->(_env) { [200, { "content-type" => "text/plain", "content-length" => "5" }, ["hello"]] }
null = File.open(File::NULL, "w")
config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], log_io: null, error_io: null, threads: 1,
                                  profile: false, metrics: false, control_bind: nil)
server = Heron::Server.new(app, config)
server.bind
thread = Thread.new { server.run }
server.wait_until_running(10)
client = KeepAliveClient.new(server.bound_ports.first)
options[:warmup].times { client.request }

# The window ends once every other thread has been blocked for two looks 2 ms apart: the
# server has logged and settled the connection (it does so after writing the response) and
# waits for the next request, well within keepalive_park_after (0.05 s), so nothing parks.
settled = lambda do
  quiet = 0
  until quiet == 2
    sleep 0.002
    quiet = Thread.list.all? { |t| t == Thread.current || t.status != "run" } ? quiet + 1 : 0
  end
end
counts = Array.new(options[:requests]) do
  CallCount.new.trace do
    client.request
    settled.call
  end
end
client.close
server.stop
thread.join(10)

median = ->(values) { values.sort[values.size / 2] }
relative = ->(path) { path.start_with?(ROOT) ? path.delete_prefix("#{ROOT}/") : "(#{path.empty? ? 'C' : File.basename(path)})" }
summary = counts.sort_by(&:cross_file)[counts.size / 2]
commit = `git -C #{ROOT} rev-parse --short HEAD 2>/dev/null`.strip
puts "Heron at #{ROOT} (#{commit}), Ruby #{RUBY_VERSION}: one keep-alive HTTP/1.1 GET, hello world, " \
     "#{options[:warmup]} warm-up requests, #{options[:requests]} measured"
puts
puts format("%-32s %8s %8s %8s", "", "median", "min", "max")
{ "lib files entered" => ->(c) { c.files.size }, "calls into lib/" => :calls.to_proc,
  "cross-file calls" => :cross_file.to_proc, "C calls from lib/" => :c_calls.to_proc }.each do |label, metric|
  values = counts.map(&metric)
  puts format("%-32s %8d %8d %8d", label, median.call(values), values.min, values.max)
end
puts
puts "Files entered (calls), in the median request:"
summary.files.sort_by { |path, n| [-n, path] }.each { |path, n| puts format("  %5d  %s", n, relative.call(path)) }
puts
puts "Cross-file calls by caller -> callee, in the median request:"
summary.edges.sort_by { |edge, n| [-n, edge] }.each do |(from, to), n|
  puts format("  %5d  %s -> %s", n, relative.call(from), relative.call(to))
end
