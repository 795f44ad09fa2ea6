# frozen_string_literal: true

require "socket"
require "rack"
require "rack/rewindable_input"
require_relative "../trusted_proxies"
require_relative "../log/request_id"

module Heron
  class Request
    # Builds each request's Rack env on one connection, over HTTP/1.1 and HTTP/2 alike: a copy of
    # the server's template, the protocol's fields (the C parser's, or HTTP2::EnvBuilder's),
    # then the connection's address, scheme, server name and Heron's own keys.
    class EnvBuilder
      DEFAULT_PORTS = { "http" => "80", "https" => "443" }.freeze
      RACK2 = Rack.release < "3"
      private_constant :DEFAULT_PORTS, :RACK2

      # @return [String] the client's address (REMOTE_ADDR; "127.0.0.1" on a unix socket).
      attr_reader :remote_addr

      # @param template [Hash] the server-wide env entries.
      # @param io [BasicSocket] the connection's socket.
      # @param config [Configuration]
      # @param peer [String, nil] the client's address from a PROXY protocol header, which
      #   replaces the socket's peer.
      def initialize(template, io, config, peer: nil)
        unix, remote, name, port = addresses(io)
        proxies = TrustedProxies.cached(config.trusted_proxies)
        # What #complete reads for every request is set first: Ruby 3.1 keeps the instance
        # variables in the order first set, so these share a cache line (bench/results/per_core.md,
        # "Fewer cold lines a request").
        @template = template
        @proxied = proxies.forwarding?(remote, peer)
        @remote_addr = peer || remote
        @tls = io.respond_to?(:accept_nonblock) # a TLS socket (TLS::Listener); plain sockets are not listeners
        @trust_proto = config.forwarded_proto
        @unix = unix
        @host = nil # the last Host header's [value, SERVER_NAME, its port or nil] (see #server_name)
        @proxies = proxies
        @local_name = name
        @local_port = port
      end

      # @return [Hash] a new env holding the template's entries. `merge` with nothing to merge
      #   copies the table as `dup` does, without dup's two calls back into Ruby
      #   (initialize_dup, initialize_copy), about 1,300 instructions a request on Ruby 3.1.
      def fresh
        @template.merge
      end

      # Adds everything the protocol's fields do not tell.
      # @param env [Hash] the env the parser (or HTTP2::EnvBuilder) filled.
      # @param input [Request::Input, HTTP2::Input] the request body.
      # @param started [Float] monotonic time the request began.
      # @return [Hash] env
      def complete(env, input, started)
        env["REMOTE_ADDR"] = @proxied ? client_address(env) : @remote_addr
        env["rack.after_reply"] = []
        env["rack.input"] = RACK2 && !input.respond_to?(:rewind) ? rewindable(env, input) : input
        env["rack.response_finished"] = []
        env["heron.request_start"] = started
        env[TrustedProxies::UNIX_PEER_KEY] = true if @unix
        Log::RequestId.assign(env)
        server_name(env, scheme(env))
        env
      end

      private

      # The peer is a trusted proxy: the client is the rightmost untrusted hop it reports.
      def client_address(env)
        @proxies.remote_addr(env, @remote_addr)
      end

      # Sets the scheme where it is not the template's "http"; returns it.
      def scheme(env)
        return tls(env) if @tls
        return "http" unless @trust_proto
        env["rack.url_scheme"] = forwarded_scheme(env)
      end

      def tls(env)
        env["HTTPS"] = "on"
        env["rack.url_scheme"] = "https"
      end

      # Rack 2's SPEC requires a rewindable `rack.input`. Under Rack 2 `rewindable_input` is on
      # unless set off, and the input is already a Request::RewindableInput; if it was set off,
      # Rack::RewindableInput copies the body into a Tempfile on the first read (still counted
      # against max_body_size by Input, still triggering 100 Continue only then); the file is
      # removed once the reply is out.
      def rewindable(env, input)
        rewindable = Rack::RewindableInput.new(input)
        env["rack.after_reply"] << -> { rewindable.close }
        rewindable
      end

      def forwarded_scheme(env)
        proto = env["HTTP_X_FORWARDED_PROTO"]&.split(",")&.first&.strip&.downcase
        proto == "https" ? "https" : "http"
      end

      def server_name(env, scheme)
        host = env["HTTP_HOST"]
        return use_local(env) unless host
        @host = split_host(host) unless @host && @host[0] == host
        env["SERVER_NAME"] = @host[1]
        env["SERVER_PORT"] = @host[2] || DEFAULT_PORTS[scheme]
      end

      # "example.com:8080" → ["example.com:8080", "example.com", "8080"]; an empty Host (allowed
      # when the target has no authority) falls back to the listener's name, an absent or empty
      # port to the scheme's (nil here). Three elements, which Ruby 3.1 keeps in the Array's own
      # slot: a fourth would move them to a buffer of their own, a cache line more a request.
      def split_host(host)
        name, port = host.start_with?("[") ? host.split(/(?<=\]):/, 2) : host.split(":", 2)
        name = @local_name if name.nil? || name.empty?
        port = nil if port&.empty?
        [host, name, port]
      end

      def use_local(env)
        env["SERVER_NAME"] = @local_name
        env["SERVER_PORT"] = @local_port
      end

      # [unix?, REMOTE_ADDR, local name, local port] of the socket.
      def addresses(io)
        local = io.local_address
        return [true, "127.0.0.1", "localhost", "0"] if local.unix?
        [false, io.remote_address.ip_address, local.ip_address, local.ip_port.to_s]
      rescue SystemCallError
        [false, "0.0.0.0", "localhost", "0"]
      end
    end
  end
end
