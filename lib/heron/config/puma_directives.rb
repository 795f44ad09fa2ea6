# frozen_string_literal: true

module Heron
  module Config
    # Puma's config-file directives, so that a `config/puma.rb` copied to `config/heron.rb` never
    # fails with a bare NoMethodError. Each one Heron does not already spell the same way is here,
    # once, as one of:
    #
    # - `:maps` — accepted: forwards its arguments to the Heron directive named in `to`;
    # - `:ignored` — accepted and does nothing, with one line on stderr saying why (`why`);
    # - `:refused` — a {ConfigError} naming what to use under Heron (`why`);
    # - `:custom` — accepted or refused by arguments, by a method written in {DSL} (`why` is its
    #   docs row).
    #
    # Directives Puma and Heron share with the same meaning (`bind`, `port`, `workers`,
    # `preload_app!`, `before_fork`, `on_worker_boot`, `pidfile`, `environment`, `early_hints`,
    # `lowlevel_error_handler`, ...) are Heron's own and are not listed. docs/configuration.md's
    # "Directives from Puma" table is made from this one (`bundle exec rake docs:settings`).
    module PumaDirectives
      NOT_NEEDED = "not needed under Heron"
      NO_HOOK = "Heron has no such hook: run the code in `before_fork` (master, once) or `on_worker_boot` (each worker), or from the deploy script"

      # Puma's plugins whose work Heron does itself: what does it.
      PLUGINS = {
        "tmp_restart" => "in development, the Railtie restarts on tmp/restart.txt",
        "systemd" => "it notifies systemd",
      }.freeze

      TABLE = {
        threads: { kind: :custom, why: "`threads MIN, MAX` (Puma's thread pool, two numbers) is accepted and does nothing, with a note: every connection is a fiber, so there is no pool to size (size the database pool instead: docs/rails.md). One number, `threads COUNT`, is Heron's own directive: reactor threads, for code that blocks without yielding" },
        plugin: { kind: :custom, why: "`plugin :tmp_restart` is accepted and does nothing: in development the Railtie restarts on `tmp/restart.txt`, elsewhere use signals or `heron ctl restart`. `plugin :systemd` likewise: Heron notifies systemd itself. Any other plugin is refused" },
        port: { kind: :custom, why: "`port NUMBER, HOST` sets `port` and `host`" },
        persistent_timeout: { kind: :maps, to: :keepalive_timeout },
        first_data_timeout: { kind: :maps, to: :first_byte_timeout },
        worker_shutdown_timeout: { kind: :maps, to: :shutdown_timeout },
        force_shutdown_after: { kind: :custom, why: "`force_shutdown_after SECONDS` sets `shutdown_timeout`; `:immediately` is `shutdown_timeout 0`; `:forever` is refused (give a number)" },
        http_content_length_limit: { kind: :maps, to: :max_body_size },
        custom_logger: { kind: :maps, to: :logger },
        before_worker_boot: { kind: :maps, to: :on_worker_boot },
        stdout_redirect: { kind: :custom, why: "`stdout_redirect PATH` or `stdout_redirect PATH, PATH` (the same file twice) sets `log_file PATH` (both logs, appended, reopened on `SIGHUP`); two different files are refused" },
        activate_control_app: { kind: :custom, why: "`activate_control_app \"tcp://127.0.0.1:9293\", { auth_token: \"x\" }` sets `control_bind` and `control_token` (`\"auto\"` keeps Heron's default, `tcp://127.0.0.1:9393`); `heron ctl` and `/stats` replace `pumactl`" },
        clear_binds!: { kind: :custom, why: "forgets the `bind`s given so far" },
        state_path: { kind: :maps, to: :control_state },
        state_permission: { kind: :ignored, why: "the `control_state` file holds the control listener's address and the pid, no secret; it is written with the process's umask" },
        log_formatter: { kind: :refused, why: "use `log_format :json` (or `:common`), or `logger` with a Logger whose formatter you set" },
        rack_url_scheme: { kind: :refused, why: "the scheme comes from the listener (`ssl_bind` / `bind \"ssl://...\"`) or, behind a proxy, from `X-Forwarded-Proto` with `forwarded_proto`" },
        set_remote_address: { kind: :refused, why: "REMOTE_ADDR is the peer; `trusted_proxies` takes it from X-Forwarded-For, and `bind \"tcp://...?proxy_protocol=v2\"` from a PROXY protocol header" },
        set_default_host: { kind: :refused, why: "use `host NAME`" },
        supported_http_methods: { kind: :refused, why: "Heron passes every method to the app; answer 405 there" },
        idle_timeout: { kind: :refused, why: "Heron has no idle shutdown; under systemd socket activation let systemd stop the service" },
        directory: { kind: :refused, why: "start Heron in that directory (`cd`, systemd's `WorkingDirectory=`)" },
        restart_command: { kind: :refused, why: "a restart re-executes the command Heron was started with (`rails server`'s own under `rails server -u heron`)" },
        debug: { kind: :refused, why: "Heron logs every app error with its backtrace; `heron ctl backtraces` shows what each thread does" },
        single: { kind: :refused, why: "branch on `workers` in Ruby: `if Integer(ENV.fetch(\"WEB_CONCURRENCY\", 0)).zero?`" },
        cluster: { kind: :refused, why: "branch on `workers` in Ruby: `if Integer(ENV.fetch(\"WEB_CONCURRENCY\", 0)).positive?`" },
        before_restart: { kind: :refused, why: NO_HOOK },
        on_restart: { kind: :refused, why: NO_HOOK },
        after_booted: { kind: :refused, why: NO_HOOK },
        on_booted: { kind: :refused, why: NO_HOOK },
        after_stopped: { kind: :refused, why: "#{NO_HOOK}; `at_exit` runs when the process stops" },
        on_stopped: { kind: :refused, why: "#{NO_HOOK}; `at_exit` runs when the process stops" },
        before_worker_shutdown: { kind: :refused, why: "#{NO_HOOK}; `at_exit` in `on_worker_boot` runs when the worker stops" },
        on_worker_shutdown: { kind: :refused, why: "#{NO_HOOK}; `at_exit` in `on_worker_boot` runs when the worker stops" },
        before_worker_fork: { kind: :refused, why: NO_HOOK },
        on_worker_fork: { kind: :refused, why: NO_HOOK },
        after_worker_fork: { kind: :refused, why: NO_HOOK },
        after_worker_boot: { kind: :refused, why: NO_HOOK },
        after_worker_shutdown: { kind: :refused, why: NO_HOOK },
        before_refork: { kind: :refused, why: "reforked workers (`refork_after`) run `on_worker_boot` like any other; #{NO_HOOK}" },
        on_refork: { kind: :refused, why: "reforked workers (`refork_after`) run `on_worker_boot` like any other; #{NO_HOOK}" },
        after_refork: { kind: :refused, why: "reforked workers (`refork_after`) run `on_worker_boot` like any other; #{NO_HOOK}" },
        before_thread_start: { kind: :refused, why: "Heron runs requests in fibers, not pool threads; #{NO_HOOK}" },
        on_thread_start: { kind: :refused, why: "Heron runs requests in fibers, not pool threads; #{NO_HOOK}" },
        before_thread_exit: { kind: :refused, why: "Heron runs requests in fibers, not pool threads; #{NO_HOOK}" },
        on_thread_exit: { kind: :refused, why: "Heron runs requests in fibers, not pool threads; #{NO_HOOK}" },
        out_of_band: { kind: :refused, why: "#{NO_HOOK}; `env[\"rack.after_reply\"]` runs code after a response is sent" },
        enable_keep_alives: { kind: :refused, why: "Heron keeps connections alive; `keepalive_timeout SECONDS` bounds how long an idle one waits" },
        fork_worker: { kind: :custom, why: "`fork_worker AFTER_REQUESTS` (default 1000) sets `refork_after`: workers are reforked from a warmed one once it has answered that many requests, and on `heron ctl refork` (docs/deployment.md, Reforking)" },
        wait_for_less_busy_worker: { kind: :ignored, why: "#{NOT_NEEDED}: a busy worker still accepts, as a slow request holds up no other" },
        max_fast_inline: { kind: :ignored, why: "#{NOT_NEEDED}: a connection is served in its own fiber however many requests it sends" },
        max_keep_alive: { kind: :ignored, why: "#{NOT_NEEDED}: a connection is served in its own fiber however many requests it sends" },
        queue_requests: { kind: :ignored, why: "#{NOT_NEEDED}: each connection reads its own request in its fiber" },
        fiber_per_request: { kind: :ignored, why: "Heron always serves each connection in a fiber" },
        clean_thread_locals: { kind: :ignored, why: "Heron always serves each connection in a fiber, whose locals start empty" },
        drain_on_shutdown: { kind: :ignored, why: "Heron always drains on TERM, for up to `shutdown_timeout`" },
        max_io_threads: { kind: :ignored, why: "#{NOT_NEEDED}: waiting on IO takes no thread" },
        io_selector_backend: { kind: :ignored, why: "Heron's event loop uses epoll (io-event)" },
        mutate_stdout_and_stderr_to_sync_on_write: { kind: :ignored, why: "Heron's logs are written line by line" },
        worker_check_interval: { kind: :ignored, why: "Heron checks its workers every second; `worker_timeout` sets how long a stuck one has" },
        worker_culling_strategy: { kind: :ignored, why: "#{NOT_NEEDED}: workers are replaced one at a time" },
        shutdown_debug: { kind: :ignored, why: "`heron ctl backtraces` shows what each thread does, and a stuck worker's backtraces are logged" },
        silence_single_worker_warning: { kind: :ignored, why: "Heron gives no such warning" },
        silence_fork_callback_warning: { kind: :ignored, why: "Heron gives no such warning" },
        prune_bundler: { kind: :ignored, why: "`SIGUSR2` re-executes Heron, which loads the new Gemfile.lock" },
        extra_runtime_dependencies: { kind: :ignored, why: "`SIGUSR2` re-executes Heron, which loads the new Gemfile.lock" },
        raise_exception_on_sigterm: { kind: :ignored, why: "on TERM Heron stops accepting and drains; nothing is raised in the app" },
        bind_to_activated_sockets: { kind: :ignored, why: "Heron serves systemd's sockets by itself when it is socket-activated" },
      }.freeze

      DOC_BEGIN = "<!-- puma directives (made from lib/heron/config/puma_directives.rb) -->"
      DOC_END = "<!-- /puma directives -->"

      module_function

      # @param text [String] docs/configuration.md.
      # @return [String] it with the table of Puma's directives made anew.
      def update_docs(text)
        text.sub(/^#{Regexp.escape(DOC_BEGIN)}\n.*?^#{Regexp.escape(DOC_END)}$/m) { [DOC_BEGIN, markdown, DOC_END].join("\n") }
      end

      # @return [String] the docs' table of Puma's directives: what each does under Heron.
      def markdown
        rows = TABLE.map { |name, entry| "| `#{name}` | #{describe(entry)} |" }
        (["| Puma's directive | under Heron |", "| --- | --- |"] + rows).join("\n")
      end

      # @param entry [Hash] a {TABLE} entry.
      # @return [String] what the directive does under Heron, in a sentence.
      def describe(entry)
        case entry[:kind]
        when :maps then "accepted: sets `#{entry[:to]}`"
        when :ignored then "accepted, does nothing (a note is printed): #{entry[:why]}"
        when :refused then "refused: #{entry[:why]}"
        else entry[:why]
        end
      end

      # @param name [Symbol] a {TABLE} key.
      # @return [String] the refusal or note for it, as written on stderr.
      def message(name)
        "#{name} is Puma's: #{TABLE.fetch(name)[:why]}"
      end
    end
  end
end
