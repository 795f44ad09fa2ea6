# frozen_string_literal: true

require "uri"

require_relative "../configuration"

module Heron
  module Config
    # The directives of a Heron config file (`config/heron.rb` by default, or `heron -C FILE`).
    # Each directive checks its value and writes it into a {Heron::Configuration}; see
    # docs/configuration.md for every directive with its default.
    #
    # @example config/heron.rb
    #   workers Integer(ENV.fetch("WEB_CONCURRENCY", 2))
    #   bind "tcp://0.0.0.0:8080"
    #   preload_app!
    #   on_worker_boot { |index| DB.disconnect }
    class DSL
      # Evaluates a config file into a configuration.
      # @param config [Heron::Configuration] the configuration to write into.
      # @param path [String] the config file.
      # @return [Heron::Configuration] `config`.
      # @raise [Heron::ConfigError] when the file cannot be read, does not parse, or sets a bad value;
      #   the message names the file and line.
      def self.load(config, path)
        new(config, path).evaluate(read(path))
        config
      end

      # @param path [String]
      # @return [String] the file's contents.
      # @raise [Heron::ConfigError] when it cannot be read.
      def self.read(path)
        File.read(path)
      rescue SystemCallError, IOError => e
        raise ConfigError, "cannot read config file #{path}: #{e.message.sub(/ @ .*/, '')}"
      end

      # @param config [Heron::Configuration] the configuration the directives write into.
      # @param path [String] the file the directives come from, named in error messages.
      def initialize(config, path = "(config)")
        @config = config
        @path = path
      end

      # Runs config-file source against this DSL.
      # @param source [String] Ruby source made of directives.
      # @return [void]
      # @raise [Heron::ConfigError] with the file and line of the first bad directive.
      def evaluate(source)
        instance_eval(source, @path, 1)
      rescue SyntaxError => e
        raise ConfigError, one_line(e.message.lines.first)
      rescue ConfigError, StandardError, ScriptError => e
        raise ConfigError, "#{location(e)}: #{describe(e)}"
      end

      # @return [String] how the config file's object shows in error messages.
      def inspect
        "the config file"
      end

      # Adds a listener (repeatable). When any bind is given, `host` and `port` are not used.
      # @param uri [String] `tcp://HOST:PORT` or `unix:///PATH`.
      # @return [Array<String>] all binds so far.
      def bind(uri)
        @config.binds = @config.binds + [Types.bind(uri, "bind")]
      end

      # Adds a TLS listener, as Puma's `ssl_bind` does (same as `bind "ssl://HOST:PORT?..."`).
      # @param host [String]
      # @param port [Integer, String]
      # @param options [Hash] cert:, key: (paths; Arrays of paths for several names, SNI), chain:,
      #   ca:, verify: (or Puma's verify_mode:), min_version:, ciphers: — see docs/tls.md.
      # @return [Array<String>] all binds so far.
      def ssl_bind(host, port, options = {})
        options = options.transform_keys(&:to_s)
        options["verify"] ||= options.delete("verify_mode")
        query = options.compact.flat_map { |name, value| Array(value).map { |item| [name, item.to_s] } }
        host = "[#{host}]" if host.to_s.include?(":")
        bind(["ssl://#{host}:#{port}", URI.encode_www_form(query)].reject(&:empty?).join("?"))
      end

      # @param number [Integer, String] the TCP port used when no `bind` is given (default 9292).
      # @return [Integer]
      def port(number)
        set(:port, number, "port")
      end

      # @param name [String] the address used when no `bind` is given (default "0.0.0.0").
      # @return [String]
      def host(name)
        set(:host, name, "host")
      end

      # @param count [Integer, String] worker processes to fork; 0 runs a single process (default 0).
      # @return [Integer]
      def workers(count)
        set(:workers, count, "workers")
      end

      # @param count [Integer, String] reactor threads per process (default 1).
      # @return [Integer]
      def threads(count)
        set(:threads, count, "threads")
      end

      # @param enabled [Boolean] load the app once in the master before forking (default false).
      # @return [Boolean]
      def preload(enabled = true)
        set(:preload, enabled, "preload")
      end

      # Same as {#preload}, spelled as in Puma.
      # @param enabled [Boolean]
      # @return [Boolean]
      def preload_app!(enabled = true)
        set(:preload, enabled, "preload_app!")
      end

      # Runs a block in the master, once, before the first worker is forked.
      # @yieldreturn [void]
      # @return [Array<Proc>] all before_fork hooks.
      def before_fork(&block)
        add_hook(:before_fork, block)
      end

      # Runs a block in each worker after it is forked.
      # @yieldparam index [Integer] the worker's index, 0 to workers - 1.
      # @return [Array<Proc>] all on_worker_boot hooks.
      def on_worker_boot(&block)
        add_hook(:on_worker_boot, block)
      end

      # Sets the environment, or reads it (so the file can branch on `-e`) when called without one.
      # @param name [String, Symbol, nil] e.g. "production" (default: APP_ENV, RAILS_ENV, RACK_ENV
      #   or development).
      # @return [String] the environment name.
      def environment(name = nil)
        set(:environment, name, "environment") unless name.nil?
        @config.environment_name
      end

      # @param path [String] the rackup file that builds the app (default "config.ru").
      # @return [String]
      def rackup(path)
        set(:rackup, path, "rackup")
      end

      # Uses an object, or a block taking env, as the Rack app instead of a rackup file.
      # @param rack_app [#call, nil] the app.
      # @return [#call]
      def app(rack_app = nil, &block)
        raise ConfigError, "app needs a Rack app or a block" unless rack_app || block
        set(:app, rack_app || block, "app")
      end

      # @param count [Integer, String] open connections per process before accepting pauses (4096).
      # @return [Integer]
      def max_connections(count)
        set(:max_connections, count, "max_connections")
      end

      # @param format [Symbol, String] :common or :json (default :common).
      # @return [Symbol]
      def log_format(format)
        set(:log_format, format, "log_format")
      end

      # @param enabled [Boolean] turn the access log off (default false).
      # @return [Boolean]
      def quiet(enabled = true)
        set(:quiet, enabled, "quiet")
      end

      # @param enabled [Boolean] write an access line per request (default true); `false` is `quiet`.
      # @return [Boolean]
      def log_requests(enabled = true)
        set(:log_requests, enabled, "log_requests")
      end

      # Sends every log line (access lines, events, the banner) to a Logger-compatible object
      # instead of stdout/stderr, at its level (info, warn, error), formatted by `log_format`.
      # @param object [#info, #warn, #error, nil] e.g. `Logger.new("log/heron.log")`; nil: the IOs.
      # @return [Object, nil]
      def logger(object)
        set(:logger, object, "logger")
      end

      # @param seconds [Numeric, String] how long a graceful stop waits for requests (default 30).
      # @return [Float]
      def shutdown_timeout(seconds)
        set(:shutdown_timeout, seconds, "shutdown_timeout")
      end

      # @param seconds [Numeric, String] new connection to first request byte (default 10).
      # @return [Float]
      def first_byte_timeout(seconds)
        set(:first_byte_timeout, seconds, "first_byte_timeout")
      end

      # @param seconds [Numeric, String] first byte to end of the header block (default 10).
      # @return [Float]
      def header_timeout(seconds)
        set(:header_timeout, seconds, "header_timeout")
      end

      # @param seconds [Numeric, String] idle time allowed between keep-alive requests (default 20).
      # @return [Float]
      def keepalive_timeout(seconds)
        set(:keepalive_timeout, seconds, "keepalive_timeout")
      end

      # @param seconds [Numeric, String] longest wait for more request body bytes (default 30).
      # @return [Float]
      def body_timeout(seconds)
        set(:body_timeout, seconds, "body_timeout")
      end

      # @param bytes_per_second [Integer, String] the average rate a request body must keep while
      #   Heron waits for it, beyond {#body_rate_grace}; 0 turns the check off (default 1024).
      # @return [Integer]
      def min_body_rate(bytes_per_second)
        set(:min_body_rate, bytes_per_second, "min_body_rate")
      end

      # @param seconds [Numeric, String] waiting for a body allowed on top of what
      #   {#min_body_rate} grants for the bytes received (default 10).
      # @return [Float]
      def body_rate_grace(seconds)
        set(:body_rate_grace, seconds, "body_rate_grace")
      end

      # @param seconds [Numeric, String] after a graceful stop is asked for, keep accepting and
      #   serving this long before closing the listeners and draining (default 0).
      # @return [Float]
      def drain_delay(seconds)
        set(:drain_delay, seconds, "drain_delay")
      end

      # @param seconds [Numeric, String] longest wait for the client to take response bytes (30).
      # @return [Float]
      def write_timeout(seconds)
        set(:write_timeout, seconds, "write_timeout")
      end

      # @param seconds [Numeric, String] a worker whose event loop has not ticked this long is logged
      #   with its threads' backtraces, killed and replaced (default 60).
      # @return [Float]
      def worker_timeout(seconds)
        set(:worker_timeout, seconds, "worker_timeout")
      end

      # @param seconds [Numeric, String] a worker that has not started serving this long after its
      #   fork is killed and replaced (default 60).
      # @return [Float]
      def worker_boot_timeout(seconds)
        set(:worker_boot_timeout, seconds, "worker_boot_timeout")
      end

      # @param bytes [Integer, String, nil] a worker whose resident memory is above this is drained
      #   and replaced, one at a time; nil (the default) turns the check off.
      # @return [Integer, nil]
      def worker_max_memory(bytes)
        set(:worker_max_memory, bytes, "worker_max_memory")
      end

      # @param path [String, nil] where the master writes its pid (removed on exit).
      # @return [String, nil]
      def pidfile(path)
        set(:pidfile, path, "pidfile")
      end

      # @param path [String, nil] a file both logs are appended to instead of stdout and stderr;
      #   reopened on SIGHUP (logrotate).
      # @return [String, nil]
      def log_file(path)
        set(:log_file, path, "log_file")
      end

      # @param bytes [Integer, String, nil] request bodies above this get 413; nil for no limit (100 MiB).
      # @return [Integer, nil]
      def max_body_size(bytes)
        set(:max_body_size, bytes, "max_body_size")
      end

      # @param enabled [Boolean, :auto] give the app a rack.input that can #rewind; the body is
      #   kept as it is read, in memory up to body_spool_threshold, then in a Tempfile (default
      #   :auto: on under Rack 2, whose SPEC requires it, off under Rack 3).
      # @return [Boolean, nil]
      def rewindable_input(enabled = true)
        set(:rewindable_input, enabled, "rewindable_input")
      end

      # @param bytes [Integer, String] a rewindable body larger than this is kept in a Tempfile
      #   rather than in memory (default 131072).
      # @return [Integer]
      def body_spool_threshold(bytes)
        set(:body_spool_threshold, bytes, "body_spool_threshold")
      end

      # @param bytes [Integer, String] request targets above this get 414 (default 8192).
      # @return [Integer]
      def max_target_bytes(bytes)
        set(:max_target_bytes, bytes, "max_target_bytes")
      end

      # @param bytes [Integer, String] header blocks above this get 431 (default 65536).
      # @return [Integer]
      def max_header_bytes(bytes)
        set(:max_header_bytes, bytes, "max_header_bytes")
      end

      # @param count [Integer, String] requests with more header fields get 431 (default 100).
      # @return [Integer]
      def max_header_fields(count)
        set(:max_header_fields, count, "max_header_fields")
      end

      # @param bytes [Integer, String] chunk extensions longer than this on one chunk-size line
      #   get 400 (default 4096).
      # @return [Integer]
      def max_chunk_extension_bytes(bytes)
        set(:max_chunk_extension_bytes, bytes, "max_chunk_extension_bytes")
      end

      # @param bytes [Integer, String] a chunked body whose chunk extensions add up to more than
      #   this gets 400 (default 65536).
      # @return [Integer]
      def max_total_chunk_extension_bytes(bytes)
        set(:max_total_chunk_extension_bytes, bytes, "max_total_chunk_extension_bytes")
      end

      # @param enabled [Boolean] trust X-Forwarded-Proto for rack.url_scheme (default false).
      # @return [Boolean]
      def forwarded_proto(enabled = true)
        set(:forwarded_proto, enabled, "forwarded_proto")
      end

      # @param enabled [Boolean] serve HTTP/2 (TLS with ALPN h2, and cleartext prior knowledge;
      #   default true).
      # @return [Boolean]
      def http2(enabled = true)
        set(:http2, enabled, "http2")
      end

      # @param count [Integer, String] streams at once on one HTTP/2 connection (default 100).
      # @return [Integer]
      def http2_max_concurrent_streams(count)
        set(:http2_max_concurrent_streams, count, "http2_max_concurrent_streams")
      end

      # @param mode [Symbol, String] when to send 100 Continue: :lazy (on first body read) or :eager.
      # @return [Symbol]
      def continue(mode)
        set(:continue_mode, mode, "continue")
      end

      # @param count [Integer, String] after-reply callbacks running at once per process (64).
      # @return [Integer]
      def after_reply_concurrency(count)
        set(:after_reply_concurrency, count, "after_reply_concurrency")
      end

      # @param enabled [Boolean, nil] per-request profiling; nil means on in development only.
      # @return [Boolean, nil]
      def profile(enabled = true)
        set(:profile, enabled, "profile")
      end

      # @param path [String] where the profiler's pages are served (default "/__heron").
      # @return [String]
      def profile_path(path)
        set(:profile_path, path, "profile_path")
      end

      # @param every [Integer, String] profile one request in this many (default 1: every one).
      # @return [Integer]
      def profile_sample(every)
        set(:profile_sample, every, "profile_sample")
      end

      # @param token [String, nil] a token the profiler's pages require (default none).
      # @return [String, nil]
      def profile_token(token)
        set(:profile_token, token, "profile_token")
      end

      # @param enabled [Boolean, nil] the metrics endpoint; nil means on when profiling is on.
      # @return [Boolean, nil]
      def metrics(enabled = true)
        set(:metrics, enabled, "metrics")
      end

      # @param uri [String, nil] the control listener: health checks, stats, `heron ctl` and
      #   /metrics (default tcp://127.0.0.1:9393; nil turns it off).
      # @return [String, nil]
      def control_bind(uri)
        set(:control_bind, uri, "control_bind")
      end

      # Old name of {#control_bind}.
      # @param uri [String, nil]
      # @return [String, nil]
      def metrics_bind(uri)
        set(:metrics_bind, uri, "metrics_bind")
      end

      # @param token [String, nil] required (as `Authorization: Bearer TOKEN`) by /stats,
      #   /backtraces and `heron ctl`'s actions (default none).
      # @return [String, nil]
      def control_token(token)
        set(:control_token, token, "control_token")
      end

      # @param name [String, nil] the tag in process titles (default: the directory's name).
      # @return [String, nil]
      def tag(name)
        set(:tag, name, "tag")
      end

      # @param count [Integer, String, nil] requests in the app at once per process before new
      #   ones get 503 with Retry-After; nil or "unlimited" for no limit (the default).
      # @return [Integer, nil]
      def max_in_flight(count)
        set(:max_in_flight, count, "max_in_flight")
      end

      # @param seconds [Numeric, String, nil] requests that waited longer (from accept, or from a
      #   trusted proxy's X-Request-Start) get 503 without reaching the app; nil or "off" (default).
      # @return [Float, nil]
      def max_queue_time(seconds)
        set(:max_queue_time, seconds, "max_queue_time")
      end

      # @param cidrs [Array<String>, String] proxies whose X-Forwarded-For, Forwarded and
      #   X-Request-Start are believed (default none).
      # @return [Array<String>]
      def trusted_proxies(*cidrs)
        set(:trusted_proxies, cidrs.flatten, "trusted_proxies")
      end

      # @param count [Integer, String] repeats of one query in a request before it is flagged (2).
      # @return [Integer]
      def n_plus_one_threshold(count)
        set(:n_plus_one_threshold, count, "n_plus_one_threshold")
      end

      private

      def set(key, value, label)
        @config.set(key, value, label: label)
      end

      def add_hook(key, block)
        raise ConfigError, "#{key} needs a block" unless block
        @config.public_send(:"#{key}=", @config.public_send(key) + [block])
      end

      def location(error)
        frame = error.backtrace_locations&.find { |place| place.path == @path }
        frame ? "#{@path}:#{frame.lineno}" : @path
      end

      def describe(error)
        return one_line(error.message) if error.is_a?(ConfigError)
        return unknown_directive(error) if error.is_a?(NameError) && error.receiver.equal?(self)
        "#{one_line(error.message)} (#{error.class})"
      end

      def unknown_directive(error)
        corrections = error.respond_to?(:corrections) ? error.corrections : []
        hint = corrections.empty? ? "" : " (did you mean #{corrections.join(' or ')}?)"
        "unknown directive #{error.name}#{hint}"
      end

      def one_line(text)
        text.strip.gsub(/\s*\n\s*/, "; ")
      end
    end
  end
end
