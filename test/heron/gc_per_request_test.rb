# frozen_string_literal: true

require "test_helper"
require "objspace"
require "open3"
require_relative "../support/tls_certificates"

# The GC-per-request guard, beside bench/instructions.rb's instructions per request: what a
# request and a waiting connection cost the garbage collector, counted (allocations and
# remembered objects are the same from run to run, unlike time). The bounds are today's counts
# plus a little room; a change that needs more says so here, with its reason. Each count is
# taken in a forked child of the test process, where no thread of an earlier test (still
# winding down, or left behind) allocates or holds objects beside the one server measured.
class GCPerRequestTest < Minitest::Test
  include ServerHelper
  include TLSCertificates::Fixture

  NAMES = ["localhost"].freeze

  # Objects allocated in the process per keep-alive hello-world request: the server's own
  # (env Hash and its values, rack.after_reply and rack.response_finished, the request id)
  # plus the app's two (its Array and headers Hash) and the client's (none: a frozen request, a
  # reused buffer). Measured 15.0 on Ruby 3.1, YJIT off and on
  # (bench/results/per_core.md, "GC and waiting fibers"), then 12.0 once the wait between
  # requests made no scheduler timer (its Handle, Proc and a heap swap's Array; "Hot waits
  # without a timer each"), then 11.0 once the response head was built in a buffer each
  # reactor thread reuses (Response::Writer; "Hello world against Iodine").
  OBJECTS_PER_REQUEST = 11.5
  # Old write-barrier-unprotected objects (remembered: re-marked by every minor GC) a
  # connection adds once its fiber waits for the rest of a head, besides new fibers (a fiber
  # cannot be WB-protected; a worker's fiber may also exist already): none. The parser (a C
  # object holding no Ruby objects) was one each until it was declared WB-protected.
  REMEMBERED_PER_WAITING_CONNECTION = 0.25
  # Scheduler timers (IO::Event::Timers::Handle, each with a Proc) made per keep-alive request:
  # the wait between requests makes none (Server::Parking::HotWaits); its watcher's sleeps
  # (each until the oldest waiter's deadline), and the parking lot's if a starved client made
  # the connection park, make a few per batch (a few dozen a second: the bound leaves a batch
  # of 400 some seconds on a busy machine). It was one per request, and those cancelled after their
  # turn lived on in the scheduler's heap, were promoted and died old
  # (bench/results/per_core.md).
  TIMERS_PER_REQUEST = 0.25
  # Bytes of machine stack a request waiting in its app keeps for every collection to scan,
  # beyond a bare suspended fiber's (ObjectSpace.memsize_of of its fiber: the fiber and the
  # stack in use at its switch). Ruby frames add none; each VM entry from C between the worker
  # and the app (a C method calling Ruby) adds about 1 KiB to every waiting request, and every
  # minor GC scans it, a cost that grows with the requests in flight (5,000 sleeping requests:
  # bench/slow_requests.rb). Measured on Ruby 3.1 for a connection woken from parking: 2,384
  # bytes with YJIT off, 1,952 with it on; 3,584 and 3,152 while the wake went through
  # `public_send` (bench/results/per_core.md, "What grows from 16 to 256 connections").
  WAITING_APP_STACK_BYTES = 2_900
  # The same for a kept-alive connection waiting in its fiber for its next request (a hot wait,
  # the state of every busy connection between two requests): 384 bytes on Ruby 3.1 (YJIT off
  # and on), 1,504 while the wait went through IO#wait_readable, a C method calling the scheduler back.
  HOT_WAIT_STACK_BYTES = 1_000
  # Objects allocated in the process per hello-world request over h2c (cleartext HTTP/2), one
  # stream at a time on one connection of 400 requests (h2load: no client in this process),
  # its set-up included: 42.5 when HTTP2::Session read frames through protocol-http2's Framer (a
  # Frame per frame) and each stream made two flow-control Windows; 39.5 (Ruby 3.1) once a
  # request's HEADERS frame was read without a Frame object and a stream made its receive
  # window only for a body; 38.5 once frame headers were packed into the output
  # (SocketStream#frame) with no String each; 33.6 once a request without a body shared the
  # connection's empty input (no HTTP2::Input, Method, Array and keyword Hash each); 31.9 once
  # a repeated header block was neither decoded nor built into env entries again; 24.4 at
  # c95de1d; 23.4 once a stream's send window was made only for a response that does not leave
  # whole (Stream#remote_window); 22.5 once a stream task's requests shared one HTTP2::Framing.
  H2C_OBJECTS_PER_REQUEST = 23
  # HTTP/1.1 parsers made per request on a kept-alive connection that parks between its
  # requests (the state of most connections at 5,000/s of 1 s sleeps: bench/slow_requests.rb):
  # the parser it gave back when it parked is lent again (Server::ParserPool). It was one per
  # request, each with the two Hashes of its keyword arguments.
  PARSERS_PER_PARKED_REQUEST = 0.2
  REQUEST = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
  # The first line of a request: a connection that has it waits for the rest of the head.
  HEAD_BEGUN = "GET / HTTP/1.1\r\n"
  APP = ->(_env) { [200, { "content-type" => "text/plain", "content-length" => "2" }, ["ok"]] }

  def test_a_keep_alive_request_allocates_at_most_the_stated_objects
    per_request = in_child { allocations_per_request }
    assert_operator per_request.min, :<=, OBJECTS_PER_REQUEST, "objects allocated per request (batches: #{per_request.join(', ')})"
  end

  def test_a_request_over_h2c_allocates_at_most_the_stated_objects
    skip "h2load is not installed (bin/setup installs nghttp2-client)" unless system("command -v h2load >/dev/null")
    per_request = in_child { h2c_allocations_per_request }
    assert_operator per_request.min, :<=, H2C_OBJECTS_PER_REQUEST, "objects allocated per h2c request (batches: #{per_request.join(', ')})"
  end

  def test_a_keep_alive_request_makes_no_scheduler_timer
    per_request = in_child { timers_per_request }
    assert_operator per_request.min, :<=, TIMERS_PER_REQUEST, "scheduler timers made per request (batches: #{per_request.join(', ')})"
  end

  # The same over TLS, whose connections never park: they wait up to keepalive_timeout in their
  # fiber (Server::Parking#kept_wait), and a timer per wait stayed in the heap for all of it.
  def test_a_keep_alive_request_over_tls_makes_no_scheduler_timer
    per_request = in_child { timers_per_request(binds: [ssl_bind("localhost")]) }
    assert_operator per_request.min, :<=, TIMERS_PER_REQUEST, "scheduler timers made per TLS request (batches: #{per_request.join(', ')})"
  end

  def test_a_connection_parked_between_requests_makes_no_parser_for_each
    per_request = in_child { parsers_per_parked_request(10) }
    assert_operator per_request, :<=, PARSERS_PER_PARKED_REQUEST, "parsers made per request on a connection that parks between them"
  end

  def test_a_connection_waiting_for_its_head_remembers_nothing_but_its_fiber
    count = 40
    added = in_child { remembered_by_waiting_connections(count) }
    assert_operator added.fdiv(count), :<=, REMEMBERED_PER_WAITING_CONNECTION,
                    "remembered WB-unprotected objects besides fibers per waiting connection"
  end

  def test_a_request_waiting_in_its_app_keeps_a_shallow_machine_stack
    extra = in_child { stack_of_waiting_requests(8) }
    assert_operator extra, :<=, WAITING_APP_STACK_BYTES,
                    "bytes of machine stack beyond a bare fiber's kept by a request waiting in its app"
  end

  def test_a_connection_waiting_for_its_next_request_keeps_a_shallow_machine_stack
    extra = in_child { stack_of_hot_waits(8) }
    assert_operator extra, :<=, HOT_WAIT_STACK_BYTES,
                    "bytes of machine stack beyond a bare fiber's kept by a connection waiting for its next request"
  end

  # A connection waiting in its fiber for its next request keeps nothing of its last response.
  # Ruby scans a waiting fiber's machine stack conservatively, so stale words there keep objects
  # alive (and promoted). The app's values reached slots near the fiber's base (where the
  # connection's own frames are live while it waits) under YJIT, and without a JIT once a c_call
  # TracePoint had run in the process: 30 of 30 kept, until the app was called one VM entry
  # deeper (Connection::StackScrub.around). Responses are counted by their first record; one may
  # stay on the stack of the idle worker fiber that ran the last app call, which is no waiting
  # connection.
  def test_a_connection_waiting_for_its_next_request_keeps_nothing_of_its_last_response
    count = 30
    kept = in_child { responses_kept_by_waiting_connections(count) }
    assert_operator kept, :<=, count / 10, "responses kept alive by #{count} connections waiting for their next request"
  end

  # The same for a connection whose next request's head has begun: it waits through
  # IO#wait_readable, which enters the scheduler from C, and the wait's frames land where the
  # app's C frames (JSON.generate's) were, leaving their slots as they found them: 30 of 30 kept
  # with the app called directly, YJIT off and on; none once .around zeroes what the app used.
  def test_a_connection_waiting_for_the_rest_of_a_head_keeps_nothing_of_its_last_response
    count = 30
    kept = in_child { responses_kept_by_waiting_connections(count, next_bytes: HEAD_BEGUN) }
    assert_operator kept, :<=, count / 10, "responses kept alive by #{count} connections waiting for the rest of a head"
  end

  # Both waits once a c_call TracePoint has run and been disabled, as a profiler, a debugger or
  # another test leaves a process: Ruby 3.1's interpreter then keeps the app's values where
  # YJIT does (30 of 30 kept with a plain call; CI's suite order met it first).
  def test_the_waits_keep_nothing_of_the_last_response_after_a_c_call_trace
    count = 30
    kept = in_child do
      TracePoint.new(:c_call) { nil }.enable { nil }
      [responses_kept_by_waiting_connections(count), responses_kept_by_waiting_connections(count, next_bytes: HEAD_BEGUN)]
    end
    assert_operator kept.max, :<=, count / 10, "responses kept alive by #{count} waiting connections (next request, rest of a head): #{kept}"
  end

  # The two tests above in a Ruby running YJIT, as production Rails does (this suite runs
  # without it).
  def test_the_waits_keep_nothing_of_the_last_response_under_yjit
    skip "this Ruby has no YJIT" unless RubyVM.const_defined?(:YJIT)
    script = 'abort("YJIT is off") unless RubyVM::YJIT.enabled?; require File.expand_path(ARGV.shift)'
    output, status = Open3.capture2e({ "COVERAGE" => nil }, RbConfig.ruby, "--yjit", "-Ilib", "-Itest", "-e", script, __FILE__,
                                     "-n", "/keeps_nothing_of_its_last_response/", chdir: ProcessHelper::ROOT)
    assert status.success?, output
    assert_match(/^2 runs, 2 assertions, 0 failures, 0 errors, 0 skips/, output)
  end

  private

  # Objects allocated per request in five batches of 400, after 500 to warm every call site.
  # The fewest of five counts: a starved client thread (a busy machine) can make the server
  # park and wake the connection, which adds objects; an object the code path adds shows in
  # every batch.
  def allocations_per_request
    with_server(APP, lint: false, quiet: true) do |port|
      socket = connect(port)
      buffer = String.new(capacity: 4096)
      request = ->(n) { n.times { socket.write(REQUEST) && response(socket, buffer) } }
      request.call(500) # warms every call site (inline caches and YJIT code are objects too)
      Array.new(5) do
        before = GC.stat(:total_allocated_objects)
        request.call(400)
        (GC.stat(:total_allocated_objects) - before) / 400.0
      end
    ensure
      socket&.close
    end
  end

  # Objects allocated per h2c request in five batches of one h2load connection of 400 requests
  # each, after one to warm every call site (the fewest of five, as #allocations_per_request).
  def h2c_allocations_per_request
    with_server(APP, lint: false, quiet: true) do |port|
      h2load(port, 400)
      Array.new(5) do
        before = GC.stat(:total_allocated_objects)
        h2load(port, 400)
        (GC.stat(:total_allocated_objects) - before) / 400.0
      end
    end
  end

  # `n` hello requests over h2c on one connection, one at a time.
  def h2load(port, count)
    system("h2load", "-n", count.to_s, "-c", "1", "-m", "1", "http://127.0.0.1:#{port}/", out: File::NULL, exception: true)
  end

  # Scheduler timers made per request in three batches of 400, after 100 (the fewest of three,
  # as #allocations_per_request).
  def timers_per_request(**config)
    made = 0
    trace = TracePoint.new(:call) { |t| made += 1 if t.defined_class == IO::Event::Timers::Handle && t.method_id == :initialize }
    with_server(APP, lint: false, quiet: true, **config) do |port|
      socket = config[:binds] ? tls_connect(port) : connect(port)
      buffer = String.new(capacity: 4096)
      request = ->(n) { n.times { socket.write(REQUEST) && response(socket, buffer) } }
      request.call(100)
      Array.new(3) do
        made = 0
        trace.enable { request.call(400) }
        made / 400.0
      end
    ensure
      socket&.close
    end
  end

  # HTTP/1.1 parsers made per request over `count` requests on one connection, each sent once
  # the connection has parked (and given its parser back) after the one before.
  def parsers_per_parked_request(count)
    made = 0
    trace = TracePoint.new(:call) { |t| made += 1 if t.method_id == :new && t.defined_class == Heron::HTTPParser.singleton_class }
    with_server(APP, lint: false, quiet: true) do |port, server|
      socket = connect(port)
      buffer = String.new(capacity: 4096)
      exchange = lambda do
        socket.write(REQUEST) && response(socket, buffer)
        wait_until("the connection parked") { server.parked_count == 1 } # this server's: the forked child holds earlier tests' reactors too
      end
      exchange.call # its first parser, given back when it parks
      trace.enable { count.times { exchange.call } }
      made.fdiv(count)
    ensure
      socket&.close
    end
  end

  # Remembered WB-unprotected objects, besides new fibers, that `count` connections add once
  # their fibers wait for the rest of a head.
  def remembered_by_waiting_connections(count)
    with_server(APP, lint: false, quiet: true, header_timeout: 60) do |port|
      sockets = Array.new(count) { connect(port) } # silent: parked, with no fiber or parser yet
      wait_until("the server accepted #{count} connections") { open_sockets >= 2 * count }
      4.times { GC.start }
      before = [GC.stat(:remembered_wb_unprotected_objects), live_fibers]
      sockets.each { |s| s.write(HEAD_BEGUN) }
      wait_for_waiting_fibers(count)
      4.times { GC.start } # what stays becomes old
      GC.stat(:remembered_wb_unprotected_objects) - before[0] - (live_fibers - before[1])
    ensure
      sockets&.each(&:close)
    end
  end

  # The most machine stack, beyond a bare suspended fiber's, that any of `count` requests waiting
  # in their app keeps. Each connection parks first (silent when accepted), so its request runs
  # in the worker that the parking lot woke, as a slow request's usually does.
  def stack_of_waiting_requests(count)
    gate = Thread::Queue.new
    app = lambda do |_env|
      gate.pop
      [200, { "content-type" => "text/plain", "content-length" => "2" }, ["ok"]]
    end
    with_server(app, lint: false, quiet: true) do |port|
      sockets = Array.new(count) { connect(port) }
      wait_until("the server accepted #{count} connections") { open_sockets >= 2 * count }
      sockets.each { |s| s.write(REQUEST) }
      wait_for_waiting_fibers(count, "call_app")
      bare = Fiber.new { Fiber.yield }.tap(&:resume)
      waiting = ObjectSpace.each_object(Fiber).select { |f| f.alive? && f.backtrace&.any? { |l| l.include?("`call_app'") } }
      waiting.map { |f| ObjectSpace.memsize_of(f) }.max - ObjectSpace.memsize_of(bare)
    ensure
      count.times { gate << :go }
      sockets&.each(&:close)
    end
  end

  # The most machine stack, beyond a bare suspended fiber's, that any of `count` kept-alive
  # connections waiting in their fiber for their next request keeps (Server::Parking::HotWaits).
  def stack_of_hot_waits(count)
    with_server(APP, lint: false, quiet: true, keepalive_park_after: 60, keepalive_timeout: 120) do |port|
      sockets = Array.new(count) { connect(port) }
      sockets.each { |s| s.write(REQUEST) }
      sockets.each { |s| s.readpartial(4096) }
      wait_for_waiting_fibers(count, "readable?")
      bare = Fiber.new { Fiber.yield }.tap(&:resume)
      waiting = ObjectSpace.each_object(Fiber).select { |f| f.alive? && f.backtrace&.any? { |l| l.include?("`readable?'") } }
      waiting.map { |f| ObjectSpace.memsize_of(f) }.max - ObjectSpace.memsize_of(bare)
    ensure
      sockets&.each(&:close)
    end
  end

  # Responses whose records are still alive once `count` connections wait for their next request
  # (after `next_bytes` of it, when given: its head begun).
  def responses_kept_by_waiting_connections(count, next_bytes: nil)
    require "json"
    records = ->(n) { Array.new(n) { |i| { "gc-per-request-marker" => i, "name" => "record #{i}", "tags" => ["t#{i % 3}"] } } }
    app = ->(_env) { [200, { "content-type" => "application/json" }, [JSON.generate({ "records" => records.call(20) })]] }
    # (header_timeout: a head begun must not time out before a busy machine has counted them all)
    with_server(app, lint: false, quiet: true, keepalive_park_after: 60, keepalive_timeout: 120, header_timeout: 120) do |port|
      warm = connect(port)
      200.times { warm.write(REQUEST) && read_json(warm) } # compiles the path (YJIT), as in a running server
      warm.close
      sockets = Array.new(count) { connect(port) }
      sockets.each { |s| s.write(REQUEST) }
      sockets.each { |s| read_json(s) }
      sockets.each { |s| s.write(next_bytes) } if next_bytes
      wait_for_waiting_fibers(count, next_bytes ? "read_request" : "wait_for_next")
      4.times { GC.start }
      ObjectSpace.each_object(Hash).count { |h| h.key?("gc-per-request-marker") && h["gc-per-request-marker"].zero? }
    ensure
      sockets&.each(&:close)
    end
  end

  # Runs the block in a forked child (only this thread lives on there) and returns its value;
  # an exception in the child is raised here with the child's message and backtrace.
  def in_child
    reader, writer = IO.pipe
    pid = fork do
      reader.close
      result = begin
        [:ok, yield]
      rescue Exception => e # rubocop:disable Lint/RescueException -- a failed assertion too
        [:raised, e.class.name, e.message, e.backtrace]
      end
      writer.write(Marshal.dump(result))
      writer.close
      exit!(0)
    end
    writer.close
    outcome = Marshal.load(reader.read) # rubocop:disable Security/MarshalLoad -- our own child
    Process.wait(pid)
    return outcome[1] if outcome[0] == :ok
    raise Minitest::Assertion, "in the child: #{outcome[1]}: #{outcome[2]}\n#{outcome[3]&.first(10)&.join("\n")}"
  ensure
    reader&.close
  end

  def tls_connect(port)
    context = OpenSSL::SSL::SSLContext.new
    context.set_params(verify_mode: OpenSSL::SSL::VERIFY_PEER, ca_file: @paths["ca"])
    socket = OpenSSL::SSL::SSLSocket.new(TCPSocket.new("127.0.0.1", port), context)
    socket.sync_close = true
    socket.hostname = "localhost"
    socket.connect
    socket
  end

  def read_json(socket)
    buffer = +""
    buffer << socket.readpartial(65_536) until buffer.end_with?("]}")
  end

  # Reads one 2-byte-body response into the reused buffer.
  def response(socket, buffer)
    socket.readpartial(4096, buffer) until buffer.end_with?("\r\n\r\nok")
    buffer.clear
  end

  # Open sockets in this process; one still being made by another thread (its IO not yet
  # initialized) raises IOError on #closed? and is not counted.
  def open_sockets
    ObjectSpace.each_object(BasicSocket).count do |socket|
      !socket.closed?
    rescue IOError
      false
    end
  end

  def live_fibers = ObjectSpace.each_object(Fiber).count(&:alive?)

  # Waits until `count` fibers wait in the given method (Connection::RequestReader#read_request, or
  # Server::Parking::Spot#wait_for_next for the wait between requests).
  def wait_for_waiting_fibers(count, method = "read_request")
    wait_until("#{count} connections waiting in their fibers (#{method})") do
      ObjectSpace.each_object(Fiber).count { |f| f.alive? && f.backtrace&.any? { |l| l.include?("`#{method}'") } } >= count
    end
  end

  # Polls the condition (a handshake with the server's state, never a fixed sleep).
  def wait_until(what)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + ProcessHelper::PATIENCE
    until yield
      flunk "gave up waiting for #{what}" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.05
    end
  end
end
