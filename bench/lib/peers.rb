# frozen_string_literal: true

require "open3"
require "rbconfig"

module Bench
  # Itsi and Iodine for bench/run.rb: installed by bin/setup-bench-peers into their own gem home
  # (never the project's bundle) and started from it, outside the bundle. Each runs as one process
  # with one worker thread for the throughput rows (Heron has one reactor thread); for the sleep
  # endpoint both get 5 threads, as Puma. (Itsi 0.2.27's fiber scheduler, `-f`, never finished
  # starting here, and ignored TERM.)
  module Peers
    SETUP = File.expand_path("../../bin/setup-bench-peers", __dir__)
    NAMES = %w[itsi iodine].freeze
    # What bundle exec sets, unset so a peer loads its own gems.
    UNBUNDLED = %w[RUBYOPT RUBYLIB BUNDLE_GEMFILE BUNDLE_BIN_PATH BUNDLER_SETUP BUNDLER_VERSION].to_h { |key| [key, nil] }.freeze

    module_function

    # @return [String, nil] the peers' gem home, or nil when they could not be installed.
    def gem_home
      out, status = Open3.capture2(SETUP)
      home = out.strip
      status.success? && !home.empty? ? home : nil
    end

    # @param home [String] the peers' gem home.
    # @return [Hash] the environment to spawn a peer with.
    def env(home)
      UNBUNDLED.merge("GEM_HOME" => home, "GEM_PATH" => home)
    end

    # @param name [String] "itsi" or "iodine".
    # @param home [String] the peers' gem home.
    # @param port [Integer]
    # @param app [String] absolute path of the rackup file.
    # @param blocking [Boolean] whether the app blocks (the sleep endpoint).
    # @param extra [Array<String>] more options for that server.
    # @return [Array<String>] the command line.
    def argv(name, home, port, app, blocking: false, extra: [])
      case name
      when "iodine"
        [RbConfig.ruby, "#{home}/bin/iodine", "-p", port.to_s, "-b", "127.0.0.1", "-w", "1", "-t", blocking ? "5" : "1", *extra, app]
      when "itsi"
        [RbConfig.ruby, "#{home}/bin/itsi", "serve", "-w", "1", "-t", blocking ? "5" : "1", "-b", "http://127.0.0.1:#{port}", *extra, "-r", app]
      end
    end

    # @param home [String]
    # @param name [String]
    # @return [String] the installed version.
    def version(home, name)
      spec = Dir.glob(File.join(home, "specifications", "#{name == 'itsi' ? 'itsi-server' : name}-*.gemspec")).max
      spec ? File.basename(spec, ".gemspec")[/-(\d[\w.]*)/, 1] : "not installed"
    end
  end
end
