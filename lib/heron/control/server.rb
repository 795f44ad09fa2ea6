# frozen_string_literal: true

require "socket"
require "uri"
require "async"
require_relative "../binder/inherited"
require_relative "fork_gate"

module Heron
  module Control
    # The control listener (`control_bind`, default tcp://127.0.0.1:9393, never the app's port):
    # health checks, the stats document, `heron ctl`'s actions and the Prometheus endpoint, all
    # answered by an {Endpoints}.
    #
    # It never stops Heron from starting: when its address is taken it says so in one log line and
    # listens on a free port of the same host instead (printed in that line and in the banner,
    # and recorded in the `control_state` file `heron ctl` reads); any other failure
    # to open it is one line too, and Heron runs without it. Connections are served concurrently
    # (each in its own fiber, in a thread of its own), each gets {CLIENT_TIMEOUT} seconds in all,
    # and past {MAX_CLIENTS} open ones the oldest is dropped for the newest: idle, silent or slow
    # sockets, however many, cannot hold up a health check or a scrape.
    #
    # A hot restart hands the listener over like the app's ({#handover}, under the key
    # `control:URI`), so `heron ctl` and health checks keep their address. The new process holds
    # the inherited socket without accepting until its `accepting` callable says yes (it is
    # ready), so a probe never meets it booting; the old process closes its copy at handover.
    class Server
      CLIENT_TIMEOUT = 5.0
      MAX_CLIENTS = 256
      MAX_HEAD = 8 * 1024
      POLL_SECONDS = 0.2
      REASONS = { 200 => "OK", 202 => "Accepted", 400 => "Bad Request", 401 => "Unauthorized", 403 => "Forbidden",
                  404 => "Not Found", 405 => "Method Not Allowed", 500 => "Internal Server Error",
                  503 => "Service Unavailable" }.freeze
      private_constant :REASONS

      OPEN = {} # listeners opened in this process or inherited over fork: Server => owner pid
      private_constant :OPEN

      # In a forked child (a cluster worker): closes the control listeners it inherited, so the
      # control port is not held by processes that never answer on it (and is free once the
      # master is gone). Leaves Unix socket files alone: they are the master's.
      # @return [void]
      def self.close_inherited
        OPEN.each { |server, owner| server.forget unless owner == Process.pid }
        OPEN.clear
      end

      # @param uri [String] a `control_bind` value.
      # @return [Boolean] whether only this host can connect to it (a Unix socket, or a TCP
      #   address every one of whose addresses is a loopback one).
      def self.local_only?(uri)
        parsed = URI.parse(uri)
        return parsed.scheme == "unix" unless parsed.scheme == "tcp"
        addresses = Addrinfo.getaddrinfo(parsed.hostname, nil, nil, :STREAM)
        !addresses.empty? && addresses.all? { |address| address.ipv4_loopback? || address.ipv6_loopback? }
      rescue URI::InvalidURIError, SocketError
        false
      end

      # @return [String, nil] the address actually listened on, as a bind URI (`tcp://127.0.0.1:9393`,
      #   what `heron ctl --control-url` takes), nil when not listening.
      attr_reader :url

      # @param uri [String] `tcp://HOST:PORT` or `unix:///PATH`.
      # @param endpoints [#call] takes (method, target, headers, the connection's local Addrinfo) and
      #   returns [status, headers, body].
      # @param logger [Log::Logger]
      # @param accepting [#call] asked before accepting on an inherited listener, until it says true.
      # @param state_file [StateFile, nil] where the address is recorded once this process answers.
      # @param tag [String, nil] recorded with it.
      def initialize(uri, endpoints, logger, accepting: -> { true }, state_file: nil, tag: nil)
        @state_file = state_file
        @tag = tag
        @uri = uri
        @endpoints = endpoints
        @logger = logger
        @accepting = accepting
        @closed = false
        @gate = ForkGate.new
      end

      # @return [String] the key a new process finds this listener under in HERON_LISTEN_FDS.
      def key = "control:#{@uri}"

      # @return [Hash{String => BasicSocket}] the listener for {Launcher::HotRestart} (empty
      #   when there is none).
      def handover
        @listener && !@listener.closed? ? { key => @listener } : {}
      end

      # At a hot restart's handover: closes this process's copy and leaves a unix socket file in
      # place (the new process serves it now).
      # @return [void]
      def handed_over!
        @path = nil
        @state_file = nil # the new process records itself there
        close
      end

      # Opens the listening socket (or takes the one a hot restart handed over), falling back to
      # a free port when the address is taken.
      # @return [self] also when nothing could be opened (then {#url} is nil).
      def bind
        @listener = inherit || open_listener(URI.parse(@uri))
        @url = url_of(@listener)
        OPEN[self] = Process.pid
        self
      rescue Errno::EADDRINUSE
        fall_back
      rescue URI::InvalidURIError, SocketError, SystemCallError => e
        @logger.warn("control listener #{@uri} cannot be opened (#{e.message}); running without it")
        self
      end

      # @return [Integer, nil] the bound TCP port.
      def port
        @listener.local_address.ip_port if @listener&.local_address&.ip?
      end

      # Serves in a background thread until {#close}.
      # @return [self]
      def start
        bind unless @listener || @url
        @thread = Thread.new { run } if @listener
        self
      end

      # Serves in the calling thread until {#close}, one reactor turn at a time through the
      # {ForkGate} ({#quiesced}).
      # @return [void]
      def run
        reactor = Async::Reactor.new # the thread's scheduler from here
        @reactor = reactor
        @gate.turn { reactor.async { |task| accept_loop(task) } } # runs the task until it waits
        nil while @gate.turn { reactor.run_once(POLL_SECONDS) }
      ensure
        @gate.turn { Fiber.set_scheduler(nil) } if reactor # closing it runs what is left
      end

      # Runs the block (a cluster master's fork of a worker) while the control thread is in its
      # root fiber, between two turns of its reactor: a child forked while that thread is inside
      # one of its fibers crashes in GC (see {ForkGate}).
      # @yield the fork.
      # @return [Object] the block's value.
      def quiesced(&)
        @gate.hold(-> { @reactor&.interrupt }, &)
      end

      # Stops serving (within {POLL_SECONDS}) and closes the socket.
      # @return [void]
      def close
        @closed = true
        @thread&.join(POLL_SECONDS * 5)
        OPEN.delete(self)
        @listener&.close unless @listener&.closed?
        File.delete(@path) if @path && File.socket?(@path)
        @state_file&.delete
      end

      # Closes this process's copy of the socket, nothing else (used in a forked child).
      # @return [void]
      def forget
        @listener&.close unless @listener&.closed?
      end

      private

      def inherit
        listener = Binder::Inherited.take.claim(key) or return nil
        uri = URI.parse(@uri)
        @path = uri.path if uri.scheme == "unix"
        @held = true
        listener
      end

      # An inherited listener accepts once the process is ready; till then the old one answers.
      def accepting?
        return true unless @held
        @held = false if @accepting.call
        !@held
      end

      def open_listener(uri)
        case uri.scheme
        when "tcp" then TCPServer.new(uri.hostname, uri.port)
        when "unix" then UNIXServer.new(remove_stale(uri.path)).tap { @path = uri.path } # ours to delete
        else raise URI::InvalidURIError, "use tcp://host:port or unix:///path"
        end
      end

      # A socket file left by a Heron that died is removed; one that answers is someone else's.
      def remove_stale(path)
        UNIXSocket.new(path).close if File.socket?(path)
        path
      rescue Errno::ECONNREFUSED
        File.delete(path)
        path
      end

      def fall_back
        uri = URI.parse(@uri)
        raise Errno::EADDRINUSE, @uri unless uri.scheme == "tcp"
        @listener = TCPServer.new(uri.hostname, 0)
        @url = url_of(@listener)
        OPEN[self] = Process.pid
        @logger.warn("control listener #{@uri} is in use; listening on #{@url} instead")
        self
      rescue SystemCallError => e
        @logger.warn("control listener #{@uri} is in use (#{e.message}); running without it")
        self
      end

      def url_of(listener)
        address = listener.local_address
        return "unix://#{address.unix_path}" if address.unix?
        host = address.ipv6? ? "[#{address.ip_address}]" : address.ip_address
        "tcp://#{host}:#{address.ip_port}"
      end

      def accept_loop(task)
        serve_clients(task)
      rescue IOError, Errno::EBADF
        nil # closed under us
      end

      # Each client runs in a task of its own; past {MAX_CLIENTS}, the oldest is dropped to make
      # room, so sockets that never send (or never finish) a head cannot keep a probe waiting.
      def serve_clients(task)
        clients = {} # task => true, oldest first
        sleep(POLL_SECONDS) until @closed || accepting?
        record unless @closed
        until @closed
          next unless @listener.wait_readable(POLL_SECONDS)
          client = @listener.accept_nonblock(exception: false)
          next if client == :wait_readable
          clients.shift.first.stop if clients.size >= MAX_CLIENTS
          serve(task, client, clients)
        end
      end

      # Tells `heron ctl` where this process answers, once it does.
      def record
        problem = @state_file&.write(@url, @tag)
        @logger.warn(problem) if problem
      end

      def serve(task, client, clients)
        task.async do |child|
          clients[child] = true
          answer(client)
        ensure
          clients.delete(child)
          client.close
        end
      end

      def answer(client)
        Async::Task.current.with_timeout(CLIENT_TIMEOUT) do
          method, target, headers = read_head(client)
          client.write(response(*@endpoints.call(method, target, headers, client.local_address), method == "HEAD"))
        end
      rescue Async::TimeoutError, SystemCallError, IOError
        nil # slow or gone: the deadline frees the slot
      end

      # @return [Array(String, String, Hash)] method, target and lower-cased header fields
      #   (method nil when the head is malformed, incomplete or over {MAX_HEAD}).
      def read_head(client)
        head = +""
        until (ending = head.index(/\r?\n\r?\n/))
          return [nil, nil, {}] if head.bytesize > MAX_HEAD || !client.wait_readable(CLIENT_TIMEOUT)
          chunk = client.read_nonblock(4096, exception: false)
          return [nil, nil, {}] if chunk.nil?
          head << chunk if chunk.is_a?(String)
        end
        ending > MAX_HEAD ? [nil, nil, {}] : parse_head(head[0, ending])
      end

      def parse_head(head)
        line, *fields = head.split(/\r?\n/)
        method, target, version = line.to_s.split(" ", 3)
        return [nil, nil, {}] unless version&.start_with?("HTTP/1.")
        [method, target, fields.to_h { |field| field.split(":", 2).map(&:strip).then { |k, v| [k.downcase, v.to_s] } }]
      end

      def response(status, headers, body, head)
        fields = headers.merge("content-length" => body.bytesize.to_s, "connection" => "close")
        lines = fields.map { |name, value| "#{name}: #{value}\r\n" }.join
        "HTTP/1.1 #{status} #{REASONS.fetch(status, 'Unknown')}\r\n#{lines}\r\n#{head ? '' : body}"
      end
    end
  end
end
