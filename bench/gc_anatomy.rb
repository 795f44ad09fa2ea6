# frozen_string_literal: true

# Where Heron's garbage-collection cost comes from, in one process (an in-process Heron on one
# reactor thread, YJIT as the Ruby running this script: `ruby --yjit` for on):
#
# 1. objects the server allocates per request (hello world over wrk keep-alive connections,
#    whose app allocates two objects), and the allocation sites of a traced window of requests;
# 2. what a connection keeps alive while its fiber waits for the rest of a request head (the
#    state every connection is in under load between reads): live slots, old objects,
#    write-barrier-unprotected objects remembered by the GC, fibers;
# 3. what a minor GC costs with N such connections waiting, against none (every collection
#    marks every live fiber and scans its stacks: fibers are write-barrier unprotected);
# 4. what a connection keeps alive while its fiber waits for its next request after a response
#    of bench/records.ru (30 records serialised with JSON.generate; keepalive_park_after raised
#    so it waits in its fiber, as a busy client's connection does): live slots, records alive.
#
#   bundle exec ruby [--yjit] bench/gc_anatomy.rb [--connections 256,1024] [--seconds 3]
#
# Writes bench/results/gc_anatomy.md (the last run below the hand-written reading).
require "optparse"
require "socket"
require "stringio"
require "objspace"
require "json"
require "rack"
require_relative "../lib/heron"
require_relative "lib/results_page"
require_relative "lib/proc_fs"

# One measurement session against an in-process server.
class GCAnatomy
  def initialize(connections:, seconds:)
    @connections = connections
    @seconds = seconds
    @served = 0
  end

  # @return [String] the Markdown report of this run.
  def run
    start_server
    waits = @connections.map { |count| waiting(count) } # first: tracing allocations leaves the heap bigger
    rows = [allocation_row]
    kept = kept_after_response(@connections.first.clamp(1, 60))
    sites = allocation_sites
    report(rows, sites, waits, kept)
  ensure
    @server&.stop
    @thread&.join
  end

  private

  def start_server
    @records = Rack::Builder.parse_file(File.expand_path("records.ru", __dir__))
    @records = @records.first if @records.is_a?(Array) # Rack 2: [app, options]
    app = lambda do |env|
      next @records.call(env) if env["PATH_INFO"] == "/records"
      @served += 1
      [200, { "content-type" => "text/plain", "content-length" => "2" }, ["ok"]]
    end
    config = Heron::Configuration.new(binds: ["tcp://127.0.0.1:0"], log_io: StringIO.new, error_io: StringIO.new, quiet: true,
                                      profile: false, metrics: false, control_bind: nil, header_timeout: 60,
                                      max_connections: 10_000, keepalive_park_after: 60, keepalive_timeout: 120)
    @server = Heron::Server.new(app, config)
    @server.bind
    @thread = Thread.new { @server.run }
    @server.wait_until_running(10)
    @port = @server.bound_ports.first
  end

  def url = "http://127.0.0.1:#{@port}/"

  # `count` connections that each got one records response and wait in their fiber for the next.
  def kept_after_response(count)
    system("wrk -t1 -c4 -d1s #{url}records > /dev/null") # compiles the path, as in a running server
    4.times { GC.start }
    live = GC.stat(:heap_live_slots)
    sockets = Array.new(count) { TCPSocket.new("127.0.0.1", @port) }
    sockets.each { |s| s.write("GET /records HTTP/1.1\r\nHost: x\r\n\r\n") }
    sockets.each do |s|
      buffer = +""
      buffer << s.readpartial(65_536) until buffer.end_with?("]}")
    end
    sleep 0.2 # the fibers reach their wait (they wait 60 s there)
    4.times { GC.start }
    { count: count, live: (GC.stat(:heap_live_slots) - live).fdiv(count),
      records: ObjectSpace.each_object(Hash).count { |h| h.key?("owner") } }
  ensure
    sockets&.each(&:close)
  end

  # Objects allocated in the whole process per request under wrk -c16, minus the app's (one
  # Hash, one Array: measured by calling the same lambda shape in a loop).
  def allocation_row
    system("wrk -t1 -c16 -d1s #{url} > /dev/null") # warm-up
    GC.start
    before = GC.stat
    served = @served
    system("wrk -t1 -c16 -d#{@seconds}s #{url} > /dev/null")
    after = GC.stat
    requests = @served - served
    { requests: requests, objects: (after[:total_allocated_objects] - before[:total_allocated_objects]).fdiv(requests),
      minor: after[:minor_gc_count] - before[:minor_gc_count], major: after[:major_gc_count] - before[:major_gc_count],
      gc_us: (after[:time] - before[:time]) * 1000.0 / requests }
  end

  # Allocation sites of a window of about 2,000 requests with GC off (so every object is still
  # there to be counted), top 20 by count.
  def allocation_sites
    system("wrk -t1 -c16 -d1s #{url} > /dev/null")
    GC.start
    GC.disable
    served = @served
    ObjectSpace.trace_object_allocations_start
    system("wrk -t1 -c4 -d1s #{url} > /dev/null")
    ObjectSpace.trace_object_allocations_stop
    requests = @served - served
    counts = Hash.new(0)
    ObjectSpace.each_object do |object|
      file = ObjectSpace.allocation_sourcefile(object)
      next unless file
      counts["#{file.sub(%r{.*/(lib|gems)/}, '')}:#{ObjectSpace.allocation_sourceline(object)} #{object.class}"] += 1
    end
    ObjectSpace.trace_object_allocations_clear
    GC.enable
    { requests: requests, top: counts.sort_by { |_, n| -n }.first(25).map { |site, n| [site, n.fdiv(requests)] } }
  end

  # `count` connections that each sent half a request head, their fibers waiting for the rest.
  def waiting(count)
    GC.start
    GC.start
    base = snapshot
    base_minor = minor_gc_us
    sockets = Array.new(count) { TCPSocket.new("127.0.0.1", @port).tap { |s| s.write("GET / HTTP/1.1\r\n") } }
    wait_for_fibers(base[:fibers] + count)
    4.times { GC.start } # everything that stays becomes old
    held = snapshot
    held_minor = minor_gc_us
    sockets.each { |s| s.write("Host: x\r\n\r\n") }
    sockets.each { |s| s.readpartial(4096) }
    { count: count, base: base, held: held, base_minor: base_minor, held_minor: held_minor }
  ensure
    sockets&.each(&:close)
  end

  def wait_for_fibers(wanted)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 30
    sleep 0.05 until ObjectSpace.each_object(Fiber).count { |f| f.alive? } >= wanted ||
                     Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
  end

  def snapshot
    stat = GC.stat
    fibers = ObjectSpace.each_object(Fiber).count(&:alive?)
    { live: stat[:heap_live_slots], old: stat[:old_objects], wb_unprotected: stat[:remembered_wb_unprotected_objects],
      fibers: fibers, by_type: wb_unprotected_by_type }
  end

  # Write-barrier-unprotected objects by type (ObjectSpace.dump: no "wb_protected" flag).
  def wb_unprotected_by_type
    counts = Hash.new(0)
    ObjectSpace.each_object do |object|
      dump = ObjectSpace.dump(object)
      next if dump.include?('"wb_protected":true')
      counts[dump[/"struct":"([^"]+)"/, 1] || dump[/"type":"([^"]+)"/, 1]] += 1
    rescue StandardError
      next
    end
    counts
  end

  # Median CPU microseconds of one minor GC (GC.start(full_mark: false)), 21 of them.
  def minor_gc_us
    times = Array.new(21) do
      started = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
      GC.start(full_mark: false, immediate_sweep: false)
      Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - started
    end
    times.sort[10] * 1e6
  end

  def report(rows, sites, waits, kept)
    alloc = rows.first
    <<~MD
      #{RUBY_DESCRIPTION}, YJIT #{defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled? ? 'on' : 'off'}.

      **Per request** (`wrk -t1 -c16 -d#{@seconds}s`, hello world whose app allocates 2 objects, #{alloc[:requests]} requests):
      #{format('%.1f', alloc[:objects])} objects allocated in the process per request; #{alloc[:minor]} minor and #{alloc[:major]} major GCs;
      #{format('%.2f', alloc[:gc_us])} µs of GC per request.

      **Allocation sites** (#{sites[:requests]} requests traced with GC off; objects per request):

      | site | per request |
      |---|---:|
      #{sites[:top].map { |site, n| "| `#{site}` | #{format('%.2f', n)} |" }.join("\n")}

      **Connections whose fiber waits for the rest of a request head** (each sent `GET / HTTP/1.1\\r\\n`;
      four full GCs, then GC.stat and ObjectSpace; a minor GC's CPU time is the median of 21 `GC.start(full_mark: false)`):

      | connections | fibers alive | live slots per connection | old objects per connection | remembered WB-unprotected per connection | WB-unprotected objects (by type) added | minor GC µs (none waiting → these waiting) | µs per waiting connection per minor GC |
      |---:|---:|---:|---:|---:|---|---:|---:|
      #{waits.map { |w| wait_row(w) }.join("\n")}

      **Connections waiting in their fiber for their next request** after one response of
      bench/records.ru (30 records, JSON.generate): #{kept[:count]} connections, #{format('%.1f', kept[:live])} live slots per
      connection, #{kept[:records]} of the #{kept[:count] * 30} records of their last responses still alive.
    MD
  end

  def wait_row(w)
    b = w[:base]
    h = w[:held]
    n = w[:count].to_f
    types = h[:by_type].filter_map { |type, c| d = c - b[:by_type].fetch(type, 0); "#{type} #{d}" if d.positive? }.join(", ")
    "| #{w[:count]} | #{h[:fibers] - b[:fibers]} | #{format('%.1f', (h[:live] - b[:live]) / n)} | #{format('%.1f', (h[:old] - b[:old]) / n)} | " \
      "#{format('%.2f', (h[:wb_unprotected] - b[:wb_unprotected]) / n)} | #{types} | #{format('%.0f → %.0f', w[:base_minor], w[:held_minor])} | " \
      "#{format('%.2f', (w[:held_minor] - w[:base_minor]) / n)} |"
  end
end

Bench::ResultsPage.capture("gc_anatomy.md")
options = { connections: [256, 1024], seconds: 3 }
OptionParser.new do |o|
  o.on("--connections LIST", Array) { |list| options[:connections] = list.map { |n| Integer(n) } }
  o.on("--seconds N", Integer) { |n| options[:seconds] = n }
end.parse!
abort "wrk is not installed" unless system("command -v wrk >/dev/null")
report = GCAnatomy.new(**options).run
puts report
