# frozen_string_literal: true

require "socket"
require "uri"
require_relative "bind_error"
require_relative "config_error"
require_relative "binder/unix_options"
require_relative "binder/inherited"
require_relative "binder/localhost"
require_relative "proxy_protocol"

module Heron
  # Opens the listening sockets named by bind URIs: `tcp://host:port` (with
  # `?proxy_protocol=v1|v2` for connections from a proxy that sends a PROXY header),
  # `ssl://host:port?...` and `unix:///path` (with `?mode=0660` or `?umask=0007`, see
  # Binder::UnixOptions).
  #
  # Listeners found open at start-up ({Binder::Inherited}) come first: after a hot restart each
  # bind URI takes the socket the old process opened for it; under systemd socket activation
  # the sockets systemd passed are served and the configured binds are ignored (see {#ignored}).
  class Binder
    BACKLOG = 2048

    # @return [Array<BasicSocket>] the open listeners.
    attr_reader :listeners

    # @return [Array<String>] configured binds not opened because systemd passed the listeners.
    attr_reader :ignored

    # @param uris [Array<String>] bind URIs.
    # @param environment [String] passed to TLS binds (a development certificate is made only in
    #   "development").
    # @param log [#call, nil] receives a line of note (a new development certificate).
    # @param http2 [Boolean] TLS binds offer h2 by ALPN.
    # @param inherited [Binder::Inherited, nil] listeners found open (default: this process's).
    def initialize(uris, environment: "development", log: nil, http2: false, inherited: nil)
      @uris = uris
      @http2 = http2
      @environment = environment
      @log = log
      @inherited = inherited
      @listeners = []
      @keys = []
      @ignored = []
    end

    # Opens every listener, or takes it over from the inherited ones.
    # @return [Array<BasicSocket>]
    # @raise [BindError, ConfigError]
    def bind
      inherited = @inherited || Inherited.take
      systemd = inherited.systemd
      systemd.empty? ? bind_configured(inherited) : adopt(systemd)
      inherited.close_unclaimed
      @paths = owned_unix_paths
      @listeners
    rescue StandardError
      close
      raise
    end

    # @param config [Configuration]
    # @return [Binder] for the configuration's binds, in its environment, noting to its error log.
    def self.for(config)
      new(config.bind_uris, environment: config.environment_name, http2: config.http2,
                            log: ->(line) { config.error_io.puts("heron: #{line}") })
    end

    # @return [Hash{String => BasicSocket}] the listeners by the key a new process finds them
    #   under (bind URI, or "systemd:NAME"), for {Launcher::HotRestart}.
    def by_key
      @keys.zip(@listeners).to_h
    end

    # From now on {#close} leaves unix socket files in place: a new process serves them.
    # @return [void]
    def handed_over!
      @paths = []
    end

    # @return [Array<String>] the listeners as URLs (ephemeral ports resolved).
    def addresses
      Binder.addresses(@listeners)
    end

    # @param listeners [Array<BasicSocket>] open listeners, this binder's or inherited ones.
    # @return [Array<String>] them as URLs: http://host:port or unix:///path.
    def self.addresses(listeners)
      listeners.map { |listener| url(listener.local_address, scheme(listener)) }
    end

    # @param listeners [Array<BasicSocket>]
    # @return [Array<Integer>] the TCP ports among them.
    def self.ports(listeners)
      listeners.map(&:local_address).select(&:ip?).map(&:ip_port)
    end

    # @param address [Addrinfo] a listener's local address.
    # @param scheme [String] "http", or "https" for a TLS listener.
    # @return [String] it as a URL: http://host:port, https://host:port or unix:///path.
    def self.url(address, scheme = "http")
      return "unix://#{address.unix_path}" if address.unix?
      host = address.ipv6? ? "[#{address.ip_address}]" : address.ip_address
      "#{scheme}://#{host}:#{address.ip_port}"
    end

    # @param listener [BasicSocket, TLS::Listener]
    # @return [String] "https" for a TLS listener, else "http".
    def self.scheme(listener)
      listener.respond_to?(:scheme) ? listener.scheme : "http"
    end

    # Closes every listener and removes the unix socket files it created (not systemd's; none
    # after {#handed_over!}).
    def close
      close_sockets
      (@paths || []).each do |path|
        File.unlink(path) if File.socket?(path)
      rescue SystemCallError
        nil
      end
      @paths = []
    end

    # Closes this process's listening sockets but leaves unix socket files in place (a cluster
    # master stopping while its workers, which hold copies, still serve or drain).
    def close_sockets
      @listeners.each do |listener|
        listener.close unless listener.closed?
      rescue IOError, SystemCallError
        nil
      end
    end

    private

    # Unix socket files this process made (systemd's are systemd's), removed by {#close}.
    def owned_unix_paths
      @keys.zip(@listeners).filter_map do |key, listener|
        listener.local_address.unix_path if !key.start_with?("systemd:") && listener.local_address.unix?
      end
    end

    # A `localhost` bind listens on every loopback address (Binder::Localhost).
    def bind_configured(inherited)
      @uris.flat_map { |uri| Localhost.expand(uri) }.each { |uri| add(uri, open(uri, inherited.claim(uri))) }
    end

    def adopt(systemd)
      @ignored = @uris.dup
      systemd.each { |key, listener| add(key, listener) }
    end

    def add(key, listener)
      @keys << key
      @listeners << listener
    end

    # `taken`: the socket a hot restart handed over for this URI, used instead of a new one.
    def open(uri, taken = nil)
      parsed = URI.parse(uri)
      case parsed.scheme
      when "tcp" then ProxyProtocol.mark(taken || tcp(parsed.host, parsed.port, uri), ProxyProtocol.version_in(uri))
      when "unix" then taken || unix("#{parsed.host}#{parsed.path}", uri, UnixOptions.new(parsed.query, uri))
      when "ssl" then ssl(parsed, uri, taken)
      else raise ConfigError, "bind #{uri.inspect}: use tcp://HOST:PORT, ssl://HOST:PORT?cert=..&key=.. or unix:///PATH"
      end
    rescue URI::InvalidURIError
      raise ConfigError, "bind #{uri.inspect} is not a valid URI"
    end

    def tcp(host, port, uri)
      raise ConfigError, "bind #{uri.inspect} needs a port" unless port
      server = TCPServer.new(host.delete("[]"), port)
      server.listen(BACKLOG)
      server
    rescue SystemCallError, SocketError => e
      raise BindError, "could not listen on #{uri}: #{e.message}"
    end

    def ssl(parsed, uri, taken)
      require_relative "tls/listener"
      require_relative "tls/context"
      context = TLS::Context.new(uri, environment: @environment, log: @log, http2: @http2)
      TLS::Listener.new(taken || tcp(parsed.host, parsed.port, uri), context)
    end

    def unix(path, uri, options)
      remove_stale(path)
      server = options.create(path) { UNIXServer.new(path) }
      server.listen(BACKLOG)
      server
    rescue SystemCallError => e
      raise BindError, "could not listen on #{uri}: #{e.message}"
    end

    def remove_stale(path)
      return unless File.socket?(path)
      UNIXSocket.new(path).close
      raise BindError, "could not listen on unix://#{path}: another server is using it"
    rescue Errno::ECONNREFUSED, Errno::ENOENT
      File.unlink(path)
    end
  end
end
