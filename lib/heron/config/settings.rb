# frozen_string_literal: true

require_relative "setting"

module Heron
  module Config
    # Every setting Heron has, each declared once (see {Setting} for the fields): the defaults
    # and types of {Heron::Configuration}, the flags of {CLI}, the directives of {DSL} and the
    # tables of docs/configuration.md (`bundle exec rake docs:settings` rewrites them;
    # test/heron/config/settings_test.rb checks they are current) all come from this list.
    # The parser's limits are among them and reach the C parser only from here.
    module Settings
      ALL = [
        { name: :binds, default: [], type: [:binds],
          group: "Listening", directive: :custom, usage: "bind URI",
          also: [["ssl_bind HOST, PORT, { cert:, key:, ... }", "none",
                  "`ssl_bind \"0.0.0.0\", 9443, { cert: \"/etc/ssl/app.crt\", key: \"/etc/ssl/app.key\" }`: a TLS listener, the same as `bind \"ssl://0.0.0.0:9443?cert=...&key=...\"` (see [tls.md](tls.md))"]],
          doc: "`bind \"tcp://0.0.0.0:8080\"`, `bind \"tcp://[::]:8080\"`, `bind \"unix:///run/heron.sock\"`, `bind \"tcp://0.0.0.0:8443?proxy_protocol=v2\"`" },
        { name: :host, default: "0.0.0.0", type: [:string],
          group: "Listening", directive: :value, usage: "host NAME",
          flags: ["-o", "--host HOST"], help: "address when no --bind is given",
          doc: "`host \"127.0.0.1\"`" },
        { name: :port, default: 9292, type: [:port],
          group: "Listening", directive: :custom, usage: "port NUMBER",
          flags: ["-p", "--port PORT"], help: "TCP port when no --bind is given",
          doc: "`port 3000` (0 picks a free port)" },
        { name: :workers, default: 0, type: [:non_negative_integer],
          group: "Processes and concurrency", directive: :value, usage: "workers COUNT",
          flags: ["-w", "--workers COUNT"], help: "worker processes; 0 runs one process",
          doc: "`workers 4`: a master process and 4 forked workers; `0` runs one process" },
        { name: :threads, default: 1, type: [:positive_integer],
          group: "Processes and concurrency", directive: :custom, usage: "threads COUNT",
          flags: ["-t", "--threads COUNT"], help: "reactor threads per process",
          doc: "`threads 2`: reactor threads per process, each running its connections as fibers" },
        { name: :preload, default: false, type: [:boolean],
          group: "Processes and concurrency", directive: :switch, usage: "preload / preload_app!",
          flags: ["--[no-]preload"], help: "load the app before forking workers",
          doc: "`preload_app!`: load the app once in the master, then fork (copy-on-write)" },
        { name: :max_connections, default: 4096, type: [:positive_integer],
          group: "Processes and concurrency", directive: :value, usage: "max_connections COUNT",
          flags: ["--max-connections COUNT"], help: "open connections per process",
          doc: "`max_connections 10_000`: open connections per process before accepting pauses (see [rails.md](rails.md#2-database-connections-requests-wait-their-turn))" },
        { name: :environment, default: nil, type: [:optional_string],
          group: "The application", directive: :custom, usage: "environment NAME",
          shown: "`APP_ENV`, `RAILS_ENV`, `RACK_ENV`, else `\"development\"`",
          flags: ["-e", "--environment NAME"], help: "the environment",
          doc: "`environment \"production\"`" },
        { name: :rackup, default: "config.ru", type: [:string],
          group: "The application", directive: :value, usage: "rackup PATH",
          doc: "`rackup \"apps/api.ru\"`" },
        { name: :app, default: nil, type: [:optional_callable],
          group: "The application", directive: :custom, usage: "app OBJECT or app { |env| }",
          doc: "`app { \\|env\\| [200, {}, [\"ok\"]] }`: wins over `rackup`" },
        { name: :log_format, default: :common, type: [:choice, [:common, :json]],
          group: "Logging", directive: :value, usage: "log_format FORMAT",
          flags: ["--log-format FORMAT"], help: "common or json",
          doc: "`log_format :json`" },
        { name: :quiet, default: false, type: [:boolean],
          group: "Logging", directive: :switch, usage: "quiet",
          flags: ["-q", "--[no-]quiet"], help: "no access log",
          doc: "`quiet`: the same as `log_requests false`" },
        { name: :log_requests, default: true, type: [:boolean],
          group: "Logging", directive: :switch, usage: "log_requests",
          flags: ["--[no-]log-requests"], help: "access log",
          doc: "`log_requests false`: no access log; start-up lines, warnings and errors are still written" },
        { name: :logger, default: nil, type: [:optional_logger],
          group: "Logging", directive: :value, usage: "logger OBJECT",
          doc: "`logger Rails.logger`: every line goes to this object (anything with `info`, `warn` and `error`) at its level, formatted by `log_format`" },
        { name: :log_io, default: $stdout, type: [:writer],
          group: "Logging",
          doc: "where access lines and the banner go; set from Ruby only (`log_file` and `logger` are the directives)" },
        { name: :error_io, default: $stderr, type: [:writer],
          group: "Logging",
          doc: "where events (warnings, errors) go, and `rack.errors`; set from Ruby only" },
        { name: :before_fork, default: [], type: [:callables],
          group: "Processes and concurrency", directive: :custom, usage: "before_fork { }",
          doc: "`before_fork { DB.disconnect }`: runs in the master, once, before the first fork" },
        { name: :on_worker_boot, default: [], type: [:callables],
          group: "Processes and concurrency", directive: :custom, usage: "on_worker_boot { |index| }",
          doc: "`on_worker_boot { \\|i\\| DB.connect }`: runs in each new worker; `index` is 0 to `workers - 1`" },
        { name: :lowlevel_error_handler, default: nil, type: [:optional_callable],
          group: "The application", directive: :custom, usage: "lowlevel_error_handler { |error, env, status| }",
          doc: "`lowlevel_error_handler { \\|error, env, status\\| Sentry.capture_exception(error) }`: called, as Puma's is, when the app or its body fails (see below)" },
        { name: :shutdown_timeout, default: 30.0, type: [:duration],
          group: "Processes and concurrency", directive: :value, usage: "shutdown_timeout SECONDS",
          flags: ["--shutdown-timeout SECONDS"], help: "graceful stop deadline",
          doc: "`shutdown_timeout 10`: how long a graceful stop waits for requests in flight (counted after `drain_delay`)" },
        { name: :worker_timeout, default: 60.0, type: [:positive_duration],
          group: "Processes and concurrency", directive: :value, usage: "worker_timeout SECONDS",
          flags: ["--worker-timeout SECONDS"], help: "kill a worker whose loop is stuck",
          doc: "`worker_timeout 30`: a worker whose event loop has not ticked this long is logged with its threads' backtraces, killed and replaced" },
        { name: :worker_boot_timeout, default: 60.0, type: [:positive_duration],
          group: "Processes and concurrency", directive: :value, usage: "worker_boot_timeout SECONDS",
          flags: ["--worker-boot-timeout SECONDS"], help: "kill a worker still booting",
          doc: "`worker_boot_timeout 120`: a worker not serving this long after its fork (slow app load, stuck `on_worker_boot`) is killed and retried" },
        { name: :worker_max_memory, default: nil, type: [:optional_size],
          group: "Processes and concurrency", directive: :value, usage: "worker_max_memory BYTES",
          shown: "off (`nil`)",
          flags: ["--worker-max-memory BYTES"], help: "replace a worker above this RSS",
          doc: "`worker_max_memory 512 * 1024 * 1024`: a worker whose RSS is above this (checked every 5 s) is replaced, one at a time, its replacement starting first" },
        { name: :refork_after, default: nil, type: [:optional_count],
          group: "Processes and concurrency", directive: :value, usage: "refork_after REQUESTS",
          shown: "off (`nil`)",
          flags: ["--refork-after REQUESTS"], help: "refork workers from a warmed one (0: on demand only)",
          doc: "`refork_after 1000`: cluster mode: after a worker answered 1,000 requests, refork the workers from it (`0`: only on `heron ctl refork`; see below)" },
        { name: :pidfile, default: nil, type: [:optional_string],
          group: "Processes and concurrency", directive: :value, usage: "pidfile PATH",
          flags: ["--pidfile PATH"], help: "write the master's pid there",
          doc: "`pidfile \"tmp/pids/heron.pid\"`: the serving master's pid, written once it serves (after a hot restart: the new one's), removed on exit" },
        { name: :log_file, default: nil, type: [:optional_string],
          group: "Logging", directive: :value, usage: "log_file PATH",
          shown: "none (stdout and stderr)",
          flags: ["--log-file PATH"], help: "append both logs there, reopened on SIGHUP",
          doc: "`log_file \"log/heron.log\"`: both logs appended to one file, reopened on `SIGHUP` (logrotate's `postrotate kill -HUP`)" },
        { name: :first_byte_timeout, default: 10.0, type: [:duration],
          group: "Timeouts and limits", directive: :value, usage: "first_byte_timeout SECONDS",
          flags: ["--first-byte-timeout SECONDS"], help: "connect to first byte",
          doc: "from accepting a connection to the first byte of its first request" },
        { name: :header_timeout, default: 10.0, type: [:duration],
          group: "Timeouts and limits", directive: :value, usage: "header_timeout SECONDS",
          flags: ["--header-timeout SECONDS"], help: "first byte to end of headers",
          doc: "from a request's first byte to the end of its header block (for HTTP/2, see below the table)" },
        { name: :keepalive_timeout, default: 20.0, type: [:duration],
          group: "Timeouts and limits", directive: :value, usage: "keepalive_timeout SECONDS",
          flags: ["--keepalive-timeout SECONDS"], help: "idle keep-alive wait",
          doc: "idle time between requests on a keep-alive connection" },
        { name: :keepalive_park_after, default: 0.05, type: [:duration],
          group: "Timeouts and limits", directive: :value, usage: "keepalive_park_after SECONDS",
          doc: "how long an idle keep-alive connection waits for its next request in a fiber before it is *parked* with no fiber (see below the table)" },
        { name: :body_timeout, default: 30.0, type: [:duration],
          group: "Timeouts and limits", directive: :value, usage: "body_timeout SECONDS",
          flags: ["--body-timeout SECONDS"], help: "wait for more body bytes",
          doc: "the longest wait for the next request body bytes" },
        { name: :min_body_rate, default: 1024, type: [:non_negative_integer],
          group: "Timeouts and limits", directive: :value, usage: "min_body_rate BYTES",
          flags: ["--min-body-rate BYTES"], help: "bytes/s a body must average, 0 = off",
          doc: "the average rate, in bytes per second, a request body must keep after `body_rate_grace`, else 408 (see below the table); `0` turns the check off" },
        { name: :body_rate_grace, default: 10.0, type: [:duration],
          group: "Timeouts and limits", directive: :value, usage: "body_rate_grace SECONDS",
          flags: ["--body-rate-grace SECONDS"], help: "waiting allowed before the rate",
          doc: "the waiting allowed on top of what `min_body_rate` grants for the bytes received" },
        { name: :prebuffer_body, default: 64 * 1024, type: [:non_negative_integer],
          group: "Request bodies", directive: :value, usage: "prebuffer_body BYTES",
          doc: "a `Content-Length` body reaches the app once this many of its bytes (or all) have arrived, the connection parked meanwhile; `0` turns it off (see below)" },
        { name: :drain_delay, default: 0.0, type: [:duration],
          group: "Processes and concurrency", directive: :value, usage: "drain_delay SECONDS",
          flags: ["--drain-delay SECONDS"], help: "keep accepting after TERM",
          doc: "`drain_delay 5`: after TERM/INT, keep accepting and serving this long before draining, for load balancers that stop sending late (see below)" },
        { name: :write_timeout, default: 30.0, type: [:duration],
          group: "Timeouts and limits", directive: :value, usage: "write_timeout SECONDS",
          flags: ["--write-timeout SECONDS"], help: "wait for the client to read",
          doc: "the longest wait for the client to accept response bytes" },
        { name: :pool_timeout, default: 30.0, type: [:duration],
          group: "Timeouts and limits", directive: :value, usage: "pool_timeout SECONDS",
          flags: ["--pool-timeout SECONDS"], help: "Rails: wait for a DB connection",
          doc: "Rails: how long a request may wait for a database connection before a 503 (see [rails.md](rails.md#2-database-connections-requests-wait-their-turn))" },
        { name: :max_body_size, default: 100 * 1024 * 1024, type: [:optional_size],
          group: "Request bodies", directive: :value, usage: "max_body_size BYTES",
          flags: ["--max-body-size BYTES"], help: "413 above this, or unlimited",
          doc: "larger request bodies get 413; `nil` means no limit (see [Request bodies](#request-bodies))" },
        { name: :websocket_max_message_size, default: 1024 * 1024, type: [:positive_integer],
          group: "Timeouts and limits", directive: :value, usage: "websocket_max_message_size BYTES",
          flags: ["--websocket-max-message-size BYTES"], help: "rack.upgrade WebSocket message limit",
          doc: "a larger `rack.upgrade` WebSocket message closes the connection with 1009, refused from its frame header (see [websockets.md](websockets.md))" },
        { name: :websocket_max_pending, default: 1024 * 1024, type: [:positive_integer],
          group: "Timeouts and limits", directive: :value, usage: "websocket_max_pending BYTES",
          flags: ["--websocket-max-pending BYTES"], help: "unsent bytes per upgraded connection",
          doc: "bytes written to a `rack.upgrade` connection that its client has not taken yet; past it the connection is closed (`client.write` returns false)" },
        { name: :websocket_ping_interval, default: 40.0, type: [:positive_duration],
          group: "Timeouts and limits", directive: :value, usage: "websocket_ping_interval SECONDS",
          flags: ["--websocket-ping-interval SECONDS"], help: "ping idle upgraded connections",
          doc: "a `rack.upgrade` WebSocket silent this long gets a ping, and is closed after another silent interval; an SSE stream gets a comment line" },
        { name: :rewindable_input, default: nil, type: [:optional_boolean],
          group: "Request bodies", directive: :switch, usage: "rewindable_input",
          shown: "`:auto`: on under Rack 2, off under Rack 3",
          flags: ["--[no-]rewindable-input"], help: "rack.input can rewind",
          doc: "`rack.input` gets `#rewind` (Rack 2's SPEC requires it, Rack 3 dropped it; see below the table)" },
        { name: :body_spool_threshold, default: 128 * 1024, type: [:non_negative_integer],
          group: "Request bodies", directive: :value, usage: "body_spool_threshold BYTES",
          flags: ["--body-spool-threshold BYTES"], help: "rewindable body to a Tempfile",
          doc: "a rewindable body larger than this is kept in a Tempfile instead of memory, as is one read whole while `body_memory_limit` is on" },
        { name: :body_memory_limit, default: 256 * 1024 * 1024, type: [:optional_size],
          group: "Request bodies", directive: :value, usage: "body_memory_limit BYTES",
          flags: ["--body-memory-limit BYTES"], help: "bodies read whole held at once, or unlimited",
          doc: "the most bytes of bodies read whole (`rack.input.read`) held at once per reactor thread; the others wait their turn (see below); `nil`: no limit" },
        { name: :max_target_bytes, default: 8 * 1024, type: [:positive_integer],
          group: "Timeouts and limits", directive: :value, usage: "max_target_bytes BYTES",
          flags: ["--max-target-bytes BYTES"], help: "414 above this",
          doc: "longer request targets get 414" },
        { name: :max_header_bytes, default: 64 * 1024, type: [:positive_integer],
          group: "Timeouts and limits", directive: :value, usage: "max_header_bytes BYTES",
          flags: ["--max-header-bytes BYTES"], help: "431 above this",
          doc: "larger header blocks get 431" },
        { name: :max_header_fields, default: 100, type: [:positive_integer],
          group: "Timeouts and limits", directive: :value, usage: "max_header_fields COUNT",
          flags: ["--max-header-fields COUNT"], help: "431 above this",
          doc: "requests with more header fields get 431; also bounds a chunked body's trailer fields" },
        { name: :max_chunk_extension_bytes, default: 4 * 1024, type: [:positive_integer],
          group: "Timeouts and limits", directive: :value, usage: "max_chunk_extension_bytes BYTES",
          doc: "chunk extensions (the bytes between a chunk's size and its CRLF) longer than this on one chunk-size line get 400" },
        { name: :max_total_chunk_extension_bytes, default: 64 * 1024, type: [:positive_integer],
          group: "Timeouts and limits", directive: :value, usage: "max_total_chunk_extension_bytes BYTES",
          doc: "a chunked body whose chunk extensions add up to more than this gets 400" },
        { name: :forwarded_proto, default: false, type: [:boolean],
          group: "Proxies and HTTP behaviour", directive: :switch, usage: "forwarded_proto",
          flags: ["--[no-]forwarded-proto"], help: "trust X-Forwarded-Proto",
          doc: "`forwarded_proto`: trust `X-Forwarded-Proto` for `rack.url_scheme`. Use it only behind a proxy that sets this header." },
        { name: :continue_mode, default: :lazy, type: [:choice, [:lazy, :eager]],
          group: "Proxies and HTTP behaviour", directive: :value, usage: "continue MODE",
          flags: ["--continue MODE"], help: "100-continue: lazy or eager",
          doc: "`continue :eager`: when to answer `Expect: 100-continue`. `:lazy` answers when the app first reads the body. `:eager` answers as soon as the headers arrive." },
        { name: :http2, default: true, type: [:boolean],
          group: "Proxies and HTTP behaviour", directive: :switch, usage: "http2",
          flags: ["--[no-]http2"], help: "serve HTTP/2: TLS with ALPN h2, cleartext with prior knowledge",
          doc: "`http2 false`: HTTP/1.1 only; on, TLS negotiates `h2` by ALPN and cleartext takes HTTP/2 with prior knowledge (see [tls.md](tls.md))" },
        { name: :early_hints, default: false, type: [:boolean],
          group: "Proxies and HTTP behaviour", directive: :switch, usage: "early_hints",
          flags: ["--[no-]early-hints"], help: "103 Early Hints through rack.early_hints",
          doc: "`early_hints`: the app gets `env[\"rack.early_hints\"]` to send `103 Early Hints` before its response (see below the table)" },
        { name: :http2_max_concurrent_streams, default: 100, type: [:positive_integer],
          group: "Proxies and HTTP behaviour", directive: :value, usage: "http2_max_concurrent_streams COUNT",
          doc: "`http2_max_concurrent_streams 50`: requests at once on one HTTP/2 connection; more are refused (`REFUSED_STREAM`)" },
        { name: :discard_body_limit, default: 64 * 1024, type: [:non_negative_integer],
          group: "Request bodies",
          doc: "the most bytes of a body the app did not read that Heron reads and drops to keep the connection; set from Ruby only" },
        { name: :after_reply_concurrency, default: 64, type: [:positive_integer],
          group: "Processes and concurrency", directive: :value, usage: "after_reply_concurrency COUNT",
          flags: ["--after-reply-concurrency COUNT"], help: "after-reply callbacks",
          doc: "`after_reply_concurrency 16`: after-reply callbacks running at once per process" },
        { name: :profile, default: nil, type: [:optional_boolean],
          group: "Profiling and metrics", directive: :switch, usage: "profile",
          shown: "on in development when heron-profiler is installed, off otherwise",
          flags: ["--[no-]profile"], help: "per-request profiler",
          doc: "`profile false`; `profile true` without the heron-profiler gem stops with a message naming it" },
        { name: :control_bind, default: "tcp://127.0.0.1:9393", type: [:optional_bind],
          group: "The control listener, health checks and `heron ctl`", directive: :value, usage: "control_bind URI",
          flags: ["--control-bind URI"], help: "health/stats/ctl/metrics listener",
          also: [["metrics_bind URI", "", "the old name of `control_bind`"]],
          doc: "`control_bind \"unix:///run/heron/control.sock\"`; `control_bind nil` turns it off" },
        { name: :control_token, default: nil, type: [:optional_string],
          group: "The control listener, health checks and `heron ctl`", directive: :value, usage: "control_token TOKEN",
          flags: ["--control-token TOKEN"], help: "token for /stats, /backtraces, ctl",
          doc: "`control_token ENV[\"HERON_CONTROL_TOKEN\"]`" },
        { name: :control_state, default: "tmp/heron-control.json", type: [:optional_string],
          group: "The control listener, health checks and `heron ctl`", directive: :value, usage: "control_state PATH",
          flags: ["--control-state PATH"], help: "where heron ctl finds this server's control listener",
          doc: "`control_state \"tmp/pids/heron-control.json\"`: where the master records the control listener's address and pid for `heron ctl`; `nil` writes none" },
        { name: :tag, default: nil, type: [:optional_string],
          group: "The control listener, health checks and `heron ctl`", directive: :value, usage: "tag NAME",
          shown: "the directory's name",
          flags: ["--tag NAME"], help: "process titles' tag",
          doc: "`tag \"api\"`: process titles read `heron master [api] http://0.0.0.0:9292`, `heron worker 0 [api]`" },
        { name: :metrics, default: nil, type: [:optional_boolean],
          group: "Profiling and metrics", directive: :switch, usage: "metrics",
          shown: "as `profile` is set, else on in development",
          flags: ["--[no-]metrics"], help: "metrics endpoint",
          doc: "`metrics true`" },
        { name: :max_in_flight, default: nil, type: [:optional_size],
          group: "Load shedding", directive: :value, usage: "max_in_flight COUNT",
          shown: "off (`nil` / `unlimited`)",
          flags: ["--max-in-flight COUNT"], help: "503 past this many requests in the app",
          doc: "`max_in_flight 200`: per process; request 201 gets `503` with `Retry-After: 1` without reaching the app" },
        { name: :max_queue_time, default: nil, type: [:optional_duration],
          group: "Load shedding", directive: :value, usage: "max_queue_time SECONDS",
          shown: "off (`nil` / `\"off\"`)",
          flags: ["--max-queue-time SECONDS"], help: "503 for requests that waited longer",
          doc: "`max_queue_time 0.5`: a request that waited longer before the app would run gets the same `503`" },
        { name: :trusted_proxies, default: [], type: [:cidrs],
          group: "Proxies and HTTP behaviour", directive: :list, usage: "trusted_proxies CIDR, ...",
          flags: ["--trusted-proxies CIDRS"], help: "comma-separated proxies to believe",
          doc: "`trusted_proxies \"10.0.0.0/8\", \"127.0.0.1\"`: see below" },
      ].map { |fields| Setting.new(**fields).freeze }.freeze

      # The longest `doc:` a setting has: one line of its table; explanations go in the prose beside it.
      DOC_LIMIT = 160

      DOC_BEGIN = "<!-- settings: %s (made from lib/heron/config/settings.rb) -->"
      DOC_END = "<!-- /settings -->"

      # Gems that add settings of their own (a core that declares none of its plugins' settings):
      # the file that declares them, as data, and the constant holding them. When the gem is
      # installed its settings join this table (directives, flags, Configuration's accessors).
      # `names` only lets Heron name the gem when one of them is used without it
      # (heron-profiler's tests check that the list matches what the gem declares).
      PLUGINS = [
        { gem: "heron-profiler", path: "heron/profiler/settings", table: "Heron::Profiler::Settings",
          names: %i[profile_path profile_sample profile_cpu_sample profile_token n_plus_one_threshold
                    query_backtrace query_backtrace_exclude n_plus_one_safelist] },
      ].freeze

      module_function

      # @return [Array<Setting>] the server's settings and those of the installed plugins.
      def all
        @all ||= (ALL + PLUGINS.flat_map { |plugin| plugin_settings(plugin) }).freeze
      end

      # @return [Array<String>] the plugins (gem names) whose settings are not available.
      def missing_plugins
        all
        @missing
      end

      # @param name [Symbol, String] a setting, directive or flag ("--profile-sample") Heron does
      #   not know.
      # @return [String] what to add to its "unknown" error: which gem declares it and how to
      #   install it, when that gem is missing; else "".
      def missing_hint(name)
        key = name.to_s.sub(/\A--(no-)?/, "").tr("-", "_").to_sym
        plugin = PLUGINS.find { |entry| entry[:names].include?(key) && missing_plugins.include?(entry[:gem]) }
        plugin ? "; #{key} is a setting of the #{plugin[:gem]} gem, which is not installed: add `gem \"#{plugin[:gem]}\"` to the Gemfile" : ""
      end

      # @return [Array<String>] "name: fault" for every declaration that breaks the table's rules
      #   ({Setting#faults}); empty when all keep them.
      def faults = all.flat_map { |setting| setting.faults(DOC_LIMIT).map { |fault| "#{setting.name}: #{fault}" } }

      # @return [Hash{Symbol => Object}] each setting's default.
      def defaults = all.to_h { |setting| [setting.name, setting.default] }.freeze

      # @param owner [String, nil] a plugin's gem name, or nil for the server's own.
      # @return [Array<Symbol>] the names of the settings that owner declares.
      def owned_by(owner) = all.select { |setting| setting.owner == owner }.map(&:name)

      # @return [Hash{Symbol => Array}] each setting's type: a {Types} method and its arguments.
      def types = all.to_h { |setting| [setting.name, setting.type] }.freeze

      # @return [Array<Array(Symbol, Array<String>, String)>] [setting, switches, help] for each
      #   setting with command-line flags.
      def flags = all.select(&:flags).map { |setting| [setting.name, setting.flags, setting.help_line] }.freeze

      # @return [Array<Setting>] the settings whose directive the DSL makes from this table.
      def directives = all.select { |setting| %i[value switch list].include?(setting.directive) }

      # @param group [String] a docs section's name.
      # @return [String] its table, in Markdown.
      def markdown(group)
        rows = all.select { |setting| setting.group == group && setting.usage }.flat_map(&:rows)
        header = ["| directive | flag | default | what it does |", "| --- | --- | --- | --- |"]
        (header + rows.map { |usage, flag, shown, doc| "| `#{usage.gsub('|', '\|')}` | #{flag} | #{shown} | #{doc} |" }).join("\n")
      end

      # The settings a plugin's file declares (none when the gem is not installed).
      def plugin_settings(plugin)
        @missing ||= []
        require plugin[:path]
        Object.const_get(plugin[:table])::ALL.map { |fields| Setting.new(**fields, owner: plugin[:gem]).freeze }
      rescue LoadError => e
        raise unless e.path == plugin[:path]
        @missing << plugin[:gem]
        []
      end
      private_class_method :plugin_settings

      # @param text [String] docs/configuration.md.
      # @return [String] it with every settings table made anew.
      def update_docs(text)
        pattern = /^#{Regexp.escape(DOC_BEGIN).sub('%s', '(.+?)')}\n.*?^#{Regexp.escape(DOC_END)}$/m
        text.gsub(pattern) do
          group = Regexp.last_match(1)
          [format(DOC_BEGIN, group), markdown(group), DOC_END].join("\n")
        end
      end
    end
  end
end
