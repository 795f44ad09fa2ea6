# frozen_string_literal: true

require "etc"
require_relative "config_error"
require_relative "config/types"

module Heron
  # Every setting Heron understands, with its default. The CLI and the config-file DSL both write
  # into one of these; the server, cluster and connection read from it.
  class Configuration
    DEFAULTS = {
      binds: [],                      # ["tcp://0.0.0.0:9292", "unix:///tmp/heron.sock"]; empty → host/port
      host: "0.0.0.0",
      port: 9292,
      workers: 0,                     # 0 = single process
      threads: 1,                     # reactor threads per process
      preload: false,
      max_connections: 4096,          # per process (per reactor thread share)
      environment: nil,               # nil → APP_ENV, RAILS_ENV, RACK_ENV, else "development"
      rackup: "config.ru",
      app: nil,                       # a Rack app object (wins over rackup)
      log_format: :common,            # :common | :json
      quiet: false,                   # no access log (same as log_requests false)
      log_requests: true,             # the access log
      logger: nil,                    # a Logger-compatible object that gets every line instead of the IOs
      log_io: $stdout,
      error_io: $stderr,
      before_fork: [],
      on_worker_boot: [],
      shutdown_timeout: 30.0,
      worker_timeout: 60.0,           # a worker whose event loop has not ticked this long is killed
      worker_boot_timeout: 60.0,      # fork → first heartbeat; slower boots are killed and retried
      worker_max_memory: nil,         # RSS bytes; a worker above it is replaced gracefully (nil: off)
      pidfile: nil,                   # path the master's pid is written to
      log_file: nil,                  # path both logs are appended to (reopened on SIGHUP)
      first_byte_timeout: 10.0,       # new connection → first byte of a request
      header_timeout: 10.0,           # first byte → end of header block
      keepalive_timeout: 20.0,        # idle between keep-alive requests
      body_timeout: 30.0,             # longest wait for the next body bytes
      min_body_rate: 1024,            # bytes/s a body must average (waiting time only); 0 = off
      body_rate_grace: 10.0,          # seconds of waiting allowed on top of received / min_body_rate
      drain_delay: 0.0,               # keep accepting this long after a graceful stop is asked for
      write_timeout: 30.0,            # longest wait for the client to accept response bytes
      max_body_size: 100 * 1024 * 1024, # 413 above this (bytes); nil = unlimited
      rewindable_input: nil,          # rack.input supports #rewind; nil → on under Rack 2, off under Rack 3
      body_spool_threshold: 128 * 1024, # rewindable bodies above this go to a Tempfile
      max_target_bytes: 8 * 1024,     # 414 above this
      max_header_bytes: 64 * 1024,    # 431 above this
      max_header_fields: 100,         # 431 above this
      max_chunk_extension_bytes: 4 * 1024, # 400 above this on one chunk-size line
      max_total_chunk_extension_bytes: 64 * 1024, # 400 above this in one chunked body
      forwarded_proto: false,         # trust X-Forwarded-Proto for rack.url_scheme
      continue_mode: :lazy,           # :lazy | :eager (Expect: 100-continue)
      http2: true,                    # HTTP/2 over TLS (ALPN h2) and cleartext with prior knowledge
      http2_max_concurrent_streams: 100, # streams (requests) at once on one HTTP/2 connection
      discard_body_limit: 64 * 1024,  # bytes read and dropped after an app ignored the body
      after_reply_concurrency: 64,    # callbacks running at once per process
      profile: nil,                   # nil → on in development, off otherwise
      profile_path: "/__heron",
      profile_sample: 1,              # measure one request in N (1: every request)
      profile_token: nil,
      control_bind: "tcp://127.0.0.1:9393", # health, stats, ctl and /metrics; nil = off (alias: metrics_bind)
      control_token: nil,             # when set, /stats, /backtraces and ctl actions need it
      tag: nil,                       # process titles' tag; nil → the directory's name
      metrics: nil,                   # nil → on when profile is on
      max_in_flight: nil,             # requests in the app at once per process; past it 503; nil = no limit
      max_queue_time: nil,            # seconds from accept (or a trusted X-Request-Start) to the app; past it 503
      trusted_proxies: [],            # CIDRs whose X-Forwarded-For / Forwarded / X-Request-Start are believed
      n_plus_one_threshold: 2,
    }.freeze

    # How {#set} checks and coerces each setting: a {Config::Types} method, and its extra arguments.
    TYPES = {
      binds: [:binds], host: [:string], port: [:port],
      workers: [:non_negative_integer], threads: [:positive_integer], preload: [:boolean],
      max_connections: [:positive_integer], environment: [:optional_string], rackup: [:string],
      app: [:optional_callable], log_format: [:choice, %i[common json]], quiet: [:boolean],
      log_requests: [:boolean], logger: [:optional_logger],
      log_io: [:writer], error_io: [:writer], before_fork: [:callables], on_worker_boot: [:callables],
      shutdown_timeout: [:duration], worker_timeout: [:positive_duration],
      worker_boot_timeout: [:positive_duration], worker_max_memory: [:optional_size],
      pidfile: [:optional_string], log_file: [:optional_string], first_byte_timeout: [:duration], header_timeout: [:duration],
      keepalive_timeout: [:duration], body_timeout: [:duration], write_timeout: [:duration],
      min_body_rate: [:non_negative_integer], body_rate_grace: [:duration], drain_delay: [:duration],
      max_body_size: [:optional_size], max_target_bytes: [:positive_integer],
      max_header_bytes: [:positive_integer], max_header_fields: [:positive_integer],
      max_chunk_extension_bytes: [:positive_integer], max_total_chunk_extension_bytes: [:positive_integer],
      rewindable_input: [:optional_boolean], body_spool_threshold: [:non_negative_integer],
      forwarded_proto: [:boolean], continue_mode: [:choice, %i[lazy eager]], http2: [:boolean],
      http2_max_concurrent_streams: [:positive_integer],
      discard_body_limit: [:non_negative_integer], after_reply_concurrency: [:positive_integer],
      profile: [:optional_boolean], profile_path: [:url_path], profile_token: [:optional_string],
      profile_sample: [:positive_integer],
      control_bind: [:optional_bind], control_token: [:optional_string], tag: [:optional_string],
      metrics: [:optional_boolean], n_plus_one_threshold: [:positive_integer],
      max_in_flight: [:optional_size], max_queue_time: [:optional_duration], trusted_proxies: [:cidrs],
    }.freeze

    # Older names that still work: the setting they set.
    ALIASES = { metrics_bind: :control_bind }.freeze

    # Where the environment name comes from when `environment` is not set, first match wins.
    # Puma reads APP_ENV, RACK_ENV, RAILS_ENV; Heron puts RAILS_ENV before RACK_ENV because Rails
    # does, so Heron and the Rails app it serves can never disagree about being in production.
    ENVIRONMENT_VARIABLES = %w[APP_ENV RAILS_ENV RACK_ENV].freeze

    DEFAULTS.each_key { |key| attr_accessor key }

    # @param overrides [Hash] settings to apply on top of {DEFAULTS}; each is checked by {#set}.
    # @raise [ConfigError] for an unknown setting or an invalid value.
    def initialize(**overrides)
      DEFAULTS.each { |key, value| instance_variable_set(:"@#{key}", dup_default(value)) }
      @explicit = []
      overrides.each { |key, value| set(key, value) }
    end

    # Checks, coerces and sets one setting by name ("4" becomes 4, "json" becomes :json).
    # @param key [Symbol] a key of {DEFAULTS}.
    # @param value [Object] the new value.
    # @param label [String] what to call the setting in an error message (e.g. "--workers").
    # @return [Object] the coerced value.
    # @raise [ConfigError] for an unknown key or an invalid value.
    def set(key, value, label: key.to_s)
      key = ALIASES.fetch(key, key)
      type, *arguments = TYPES.fetch(key) { raise ConfigError, "unknown setting #{key.inspect}" }
      coerced = public_send(:"#{key}=", Config::Types.public_send(type, value, label, *arguments))
      @explicit |= [key]
      coerced
    end

    # @param key [Symbol] a key of {DEFAULTS}.
    # @return [Boolean] whether {#set} has set it (a config-file directive or a constructor
    #   argument), as opposed to its default.
    def explicit?(key)
      @explicit.include?(key)
    end

    # What hosting platforms set, used only where nothing more specific did: `WEB_CONCURRENCY`
    # for `workers` (a number, or "auto" for one per CPU) and `PORT` for `port` (when no bind is
    # given either). Called by the `heron` command once the config file and flags are in.
    # @param env [Hash{String => String}] the process environment.
    # @param given [Array<Symbol>] settings given some other way (command-line flags).
    # @return [self]
    # @raise [ConfigError] naming the variable when its value is invalid.
    def apply_platform_env(env = ENV, given: [])
      workers = present(env["WEB_CONCURRENCY"])
      port = present(env["PORT"])
      workers = Etc.nprocessors if workers == "auto"
      set(:workers, workers, label: "WEB_CONCURRENCY") if workers && !given?(:workers, given)
      set(:port, port, label: "PORT") if port && binds.empty? && !given?(:port, given)
      self
    end

    # @return [String, nil] the control address (old name of {#control_bind}).
    def metrics_bind = control_bind

    # @param uri [String, nil] sets {#control_bind} (old name).
    def metrics_bind=(uri)
      self.control_bind = uri
    end

    # @return [Hash{Symbol => Object}] every setting and its current value.
    def to_h
      DEFAULTS.keys.to_h { |key| [key, public_send(key)] }
    end

    # @return [Array<String>] bind URIs: the explicit binds, or one built from host and port.
    def bind_uris
      return binds unless binds.empty?
      ["tcp://#{host.include?(':') ? "[#{host}]" : host}:#{port}"]
    end

    # @return [String] the environment name: the `environment` setting (`-e`), else the first of
    #   {ENVIRONMENT_VARIABLES} that is set and not empty, else "development".
    def environment_name
      environment || ENVIRONMENT_VARIABLES.lazy.filter_map { |name| present(ENV[name]) }.first || "development"
    end

    # @return [Boolean] whether rack.input must support #rewind: as set, else when the app runs
    #   under Rack 2 (whose SPEC requires it; Rack 3 dropped it).
    def rewindable_input?
      return rewindable_input unless rewindable_input.nil?
      require "rack/version"
      Rack.release < "3"
    end

    # @return [Boolean] whether per-request profiling is on.
    def profile?
      profile.nil? ? environment_name == "development" : profile
    end

    # @return [Boolean] whether the Prometheus metrics endpoint runs.
    def metrics?
      metrics.nil? ? profile? : metrics
    end

    private

    def present(value)
      value = value&.strip
      value.nil? || value.empty? ? nil : value
    end

    def given?(key, given)
      explicit?(key) || given.include?(key)
    end

    def dup_default(value)
      value.is_a?(Array) || value.is_a?(Hash) ? value.dup : value
    end
  end
end
