# frozen_string_literal: true

require "fileutils"
require "tmpdir"
require "rbconfig"

# Writes a small real Rails 7.1 API app into a directory, for tests that start it with `heron`,
# `rackup -s heron` or `bin/rails server -u heron`. Rails itself comes from
# HERON_RAILS_GEM_HOME (bin/setup-rails fills it); {#rails_env} points a child process at it.
# Used with InstallHelper (its #serving); {.write} and {.env} serve code that does not include it.
module RailsApp
  LIB = File.expand_path("../../lib", __dir__)
  # For heron-profiler's Rails tests: the app runs as one with heron-profiler in its Gemfile's
  # development group, on its load path (the core's run it without).
  PROFILER_LIB = File.expand_path("../../heron-profiler/lib", __dir__)

  # A controller that runs the same query from one call site 6 times (an N+1 for the profiler),
  # on SQLite in development and production.
  QUERIES_APP = {
    "config/database.yml" => <<~YAML,
      development:
        adapter: sqlite3
        database: db/development.sqlite3
      production:
        adapter: sqlite3
        database: db/production.sqlite3
    YAML
    "app/controllers/queries_controller.rb" => <<~'RUBY',
      class QueriesController < ActionController::API
        # The same query from one call site, 6 times: an N+1 for the profiler.
        def show
          values = (1..6).map { |i| ActiveRecord::Base.connection.select_value("SELECT #{i}") }
          render plain: "#{Rails.env} #{values.sum} #{request.remote_addr}"
        end
      end
    RUBY
  }.freeze

  # Skips the test when Rails is not installed (bin/test sets HERON_RAILS_GEM_HOME).
  def setup
    super
    @gem_home = ENV["HERON_RAILS_GEM_HOME"] or skip "Rails is not installed (bin/setup-rails installs it; bin/test runs it)"
  end

  # Writes the app into `dir`.
  # @param dir [String]
  # @param railties [Array<String>] e.g. ["active_record", "action_controller"].
  # @param routes [String] the body of `routes.append { }`.
  # @param files [Hash{String => String}] more files (controllers, database.yml), by path.
  # @return [String] dir
  def write_rails_app(dir, railties:, routes:, files: {}) = RailsApp.write(dir, railties: railties, routes: routes, files: files)

  # The same as {#write_rails_app}, for code that does not include the module (bench scripts,
  # other fixtures).
  # @return [String] dir
  def self.write(dir, railties:, routes:, files: {})
    requires = railties.map { |name| %(require "#{name}/railtie") }.join("\n")
    app = <<~RUBY
      require "rails"
      #{requires}
      require "heron" # what Bundler.require does for `gem "heron"`
      class HeronTestApp < Rails::Application
        config.load_defaults 7.1
        config.api_only = true
        config.root = File.expand_path("..", __dir__)
        config.eager_load = false
        config.secret_key_base = "x" * 64
        config.hosts.clear
        config.logger = ActiveSupport::Logger.new(File.expand_path("../log/app.log", __dir__))
        routes.append { #{routes} }
      end
    RUBY
    { "config/application.rb" => app, "config/environment.rb" => %(require_relative "application"\nRails.application.initialize!\n),
      "config.ru" => %(require_relative "config/environment"\nrun Rails.application\n), "bin/rails" => bin_rails, **files }.each do |path, text|
      FileUtils.mkdir_p(File.dirname(File.join(dir, path)))
      File.write(File.join(dir, path), text)
    end
    File.chmod(0o755, File.join(dir, "bin/rails"))
    %w[tmp/pids log db].each { |sub| FileUtils.mkdir_p(File.join(dir, sub)) }
    dir
  end

  # @return [String] bin/rails for an app that finds Heron in this checkout's lib/.
  def self.bin_rails
    <<~RUBY
      #!#{RbConfig.ruby}
      $LOAD_PATH.unshift(#{LIB.inspect})
      APP_PATH = File.expand_path("../config/application", __dir__)
      require "rails/commands"
    RUBY
  end

  # Serves the QUERIES_APP with a launcher (`config/heron.rb`: no metrics, no control listener).
  # @yieldparam port [Integer]
  # @yieldparam log [String] the server's log file.
  def with_queries_app(environment, launcher, host, profiler: false)
    Dir.mktmpdir("heron-rails-env") do |dir|
      write_rails_app(dir, railties: %w[active_record action_controller], routes: 'root "queries#show"', files: QUERIES_APP)
      File.write(File.join(dir, "config/heron.rb"), "metrics false\ncontrol_bind nil\n")
      port = free_port
      serving(rails_env(environment, profiler: profiler), rails_app_command(launcher, host, port), chdir: dir) { |log| yield port, log }
    end
  end

  # @param environment [String] RAILS_ENV.
  # @param profiler [Boolean] whether heron-profiler is on the app's load path.
  # @return [Hash{String => String, nil}] the environment of a child process that runs the app.
  def rails_env(environment, profiler: false) = RailsApp.env(@gem_home, environment, profiler: profiler)

  # @param gem_home [String] where bin/setup-rails installed Rails.
  # @return [Hash{String => String, nil}] as {#rails_env}, for code that does not include the module.
  def self.env(gem_home, environment, profiler: false)
    { "RAILS_ENV" => environment, "GEM_HOME" => gem_home, "GEM_PATH" => [gem_home, *Gem.path].join(File::PATH_SEPARATOR),
      "RUBYLIB" => (PROFILER_LIB if profiler) }
  end

  # @param launcher [Symbol] :heron, :rackup or :rails.
  # @param host [String]
  # @param port [Integer]
  # @return [Array<String>] the command that serves the app in its directory with that launcher.
  def rails_app_command(launcher, host, port)
    case launcher
    when :heron then [RbConfig.ruby, File.join(LIB, "../exe/heron"), "-b", "tcp://#{host}:#{port}", "config.ru"]
    when :rackup then [RbConfig.ruby, "-I", LIB, File.join(@gem_home, "bin/rackup"), "-s", "heron", "-o", host, "-p", port.to_s, "config.ru"]
    else %W[bin/rails server -u heron -b #{host} -p #{port}]
    end
  end
end
