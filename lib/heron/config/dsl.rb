# frozen_string_literal: true

require "uri"

require_relative "../configuration"
require_relative "puma_directives"

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
        note_unused_port
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

      # Uses an object, or a block taking env, as the Rack app instead of a rackup file.
      # @param rack_app [#call, nil] the app.
      # @return [#call]
      def app(rack_app = nil, &block)
        raise ConfigError, "app needs a Rack app or a block" unless rack_app || block
        set(:app, rack_app || block, "app")
      end

      # Old name of {#control_bind}.
      # @param uri [String, nil]
      # @return [String, nil]
      def metrics_bind(uri)
        set(:metrics_bind, uri, "metrics_bind")
      end

      # Calls the block (or object) with (error, env, status) when the app raises, as Puma's
      # directive of this name does; for error reporters (see Response::AppFailure).
      # @param handler [#call, nil]
      # @return [#call]
      def lowlevel_error_handler(handler = nil, &block)
        raise ConfigError, "lowlevel_error_handler needs a block or an object with #call" unless handler || block
        set(:lowlevel_error_handler, handler || block, "lowlevel_error_handler")
      end

      # Heron's reactor threads (`threads 2`); Puma's `threads MIN, MAX` does nothing, saying why.
      # @param count [Integer, String]
      # @param max [Integer, String, nil] Puma's second number.
      # @return [Integer, nil]
      def threads(count, max = nil)
        return note("threads #{count}, #{max} is Puma's thread pool: Heron serves every connection in a fiber and needs none " \
                    "(Heron's `threads COUNT`, one number, sets reactor threads; size the database pool: docs/rails.md)") unless max.nil?
        set(:threads, count, "threads")
      end

      # Sets the port, and with Puma's second argument the host.
      # @param number [Integer, String]
      # @param host [String, nil]
      # @return [Integer]
      def port(number, host = nil)
        set(:host, host, "port") if host
        @port_given = set(:port, number, "port")
      end

      # Puma's `fork_worker`: reforking from a warmed worker, Heron's `refork_after`.
      # @param after_requests [Integer]
      # @return [Integer]
      def fork_worker(after_requests = 1000)
        set(:refork_after, after_requests, "fork_worker")
      end

      # Puma's plugins: `:tmp_restart` and `:systemd` are what Heron does anyway; others are refused.
      # @param name [Symbol, String]
      # @return [nil]
      def plugin(name)
        done = PumaDirectives::PLUGINS[name.to_s]
        raise ConfigError, "plugin #{name.inspect}: Puma plugins do not run under Heron (docs/configuration.md, Directives from Puma)" unless done
        note("plugin #{name.inspect} is Puma's: Heron does this itself (#{done})")
      end

      # Puma's graceful-stop deadline: a number of seconds, or :immediately.
      # @param seconds [Numeric, Symbol]
      # @return [Float]
      def force_shutdown_after(seconds)
        raise ConfigError, PumaDirectives.message(:force_shutdown_after) if seconds.to_s == "forever"
        set(:shutdown_timeout, seconds.to_s == "immediately" ? 0 : seconds, "force_shutdown_after")
      end

      # Puma's log redirection: one file for both logs is `log_file`.
      # @param stdout [String]
      # @param stderr [String, nil]
      # @param _append [Boolean] Heron always appends.
      # @return [String]
      def stdout_redirect(stdout, stderr = nil, _append = true)
        raise ConfigError, PumaDirectives.message(:stdout_redirect) unless stderr.nil? || stderr == stdout
        set(:log_file, stdout, "stdout_redirect")
      end

      # Puma's control app: Heron's control listener, with its token.
      # @param url [String] "auto" keeps Heron's default address.
      # @param options [Hash] auth_token:
      # @return [String, nil]
      def activate_control_app(url = "auto", options = {})
        set(:control_token, options[:auth_token], "activate_control_app") if options[:auth_token]
        set(:control_bind, url, "activate_control_app") unless url == "auto"
        @config.control_bind
      end

      # Forgets the binds given so far (Puma's `clear_binds!`).
      # @return [Array]
      def clear_binds!
        @config.binds = []
      end

      PumaDirectives::TABLE.each do |name, entry|
        case entry[:kind]
        when :maps then define_method(name) { |*args, &block| public_send(entry[:to], *args, &block) }
        when :ignored then define_method(name) { |*_args, &_block| note(PumaDirectives.message(name)) }
        when :refused then define_method(name) { |*_args, &_block| raise ConfigError, PumaDirectives.message(name) }
        end
      end

      # Directives that set one setting, made from the table (docs/configuration.md lists them).
      Settings.directives.each do |setting|
        key = setting.name
        name = setting.directive_name
        case setting.directive
        when :value then define_method(name) { |value| set(key, value, name) }
        when :switch then define_method(name) { |enabled = true| set(key, enabled, name) }
        when :list then define_method(name) { |*values| set(key, values.flatten, name) }
        end
      end

      private

      # Puma listens on `port` beside every `bind`; Heron uses it only without binds: say so.
      def note_unused_port
        return unless @port_given && !@config.binds.empty?
        note("port #{@port_given} is not used: Heron listens on the binds alone when any is given (Puma on both); " \
             "add bind \"tcp://0.0.0.0:#{@port_given}\" to listen there too")
      end

      # One line on stderr, with the file and line, for a directive accepted without effect.
      def note(text)
        line = caller_locations.find { |place| place.path == @path }&.lineno
        @config.error_io.puts("heron: #{@path}#{":#{line}" if line}: note: #{text} (ignored)")
        nil
      end

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
        "unknown directive #{error.name}#{hint}#{Settings.missing_hint(error.name)}"
      end

      def one_line(text)
        text.strip.gsub(/\s*\n\s*/, "; ")
      end
    end
  end
end
