# frozen_string_literal: true

require "optparse"
require "socket"
require "uri"
require_relative "../configuration"
require_relative "../config/dsl"
require_relative "../config/cli"
require_relative "endpoints"
require_relative "state_file"
require_relative "not_running"

module Heron
  module Control
    # `heron ctl COMMAND`: talks to a running Heron's control listener.
    #
    #   heron ctl stats                      # the stats document (JSON)
    #   heron ctl backtraces                 # every thread and task, with where each waits
    #   heron ctl restart|phased-restart|reopen-logs|refork|stop|halt
    #
    # The address is `--control-url`, else the one the server started in this directory recorded
    # in its `control_state` file (tmp/heron-control.json unless the config file says otherwise),
    # else a `control_bind` the config file (`-C FILE`, or config/heron.rb when present) sets.
    # Never a default address: one that may belong to another user's server. The token is
    # `--control-token`, else HERON_CONTROL_TOKEN, else the config file's `control_token`.
    class CLI
      READS = { "stats" => "/stats", "backtraces" => "/backtraces" }.freeze
      COMMANDS = (READS.keys + Endpoints::ACTIONS.keys).freeze
      USAGE = "Usage: heron ctl [--control-url URI] [--control-token TOKEN] [-C FILE] #{COMMANDS.join('|')}"
      TIMEOUT = 10.0

      # @param argv [Array<String>] the arguments after `ctl`.
      # @param stdout [IO]
      # @param stderr [IO]
      def initialize(argv, stdout: $stdout, stderr: $stderr)
        @argv = argv.dup
        @stdout = stdout
        @stderr = stderr
      end

      # @return [Integer] 0 when the server answered 2xx, 1 when it refused, cannot be reached or
      #   cannot be found, 2 for a usage error.
      def run
        command = parse
        status, body = request(command)
        (status.between?(200, 299) ? @stdout : @stderr).print(body)
        status.between?(200, 299) ? 0 : 1
      rescue ConfigError, OptionParser::ParseError => e
        @stderr.puts("heron ctl: #{e.message}\n#{USAGE}")
        2
      rescue NotRunning => e
        @stderr.puts("heron ctl: #{e.message}")
        1
      rescue SystemCallError, IOError, SocketError => e
        @stderr.puts("heron ctl: cannot reach the control listener at #{@url}: #{e.message}")
        1
      end

      private

      def parse
        options = {}
        rest = option_parser(options).parse(@argv)
        raise ConfigError, "one command expected, got #{rest.inspect}" unless rest.size == 1
        raise ConfigError, "unknown command #{rest.first.inspect}" unless COMMANDS.include?(rest.first)
        settle(options)
        rest.first
      end

      def option_parser(options)
        OptionParser.new do |parser|
          parser.banner = USAGE
          parser.on("--control-url URI", "tcp://HOST:PORT or unix:///PATH") { |uri| options[:url] = uri }
          parser.on("--control-token TOKEN") { |token| options[:token] = token }
          parser.on("-C", "--config FILE") { |path| options[:config] = path }
        end
      end

      def settle(options)
        config = Configuration.new
        file = options[:config] || (Config::CLI::DEFAULT_CONFIG_FILE if File.file?(Config::CLI::DEFAULT_CONFIG_FILE))
        Config::DSL.load(config, file) if file
        @url = options[:url] || StateFile.new(config.control_state).url || configured(config, file)
        @token = options[:token] || ENV["HERON_CONTROL_TOKEN"] || config.control_token
      end

      def configured(config, file)
        unless file && config.explicit?(:control_bind)
          raise NotRunning, "no Heron recorded its control listener here (#{config.control_state || 'control_state is off'}" \
                             " is missing in #{Dir.pwd}) and no config file sets control_bind: run this in the app's " \
                             "directory, or pass --control-url"
        end
        config.control_bind or raise ConfigError, "control_bind is off in #{file}"
      end

      def request(command)
        path = READS[command] || "/control/#{command}"
        socket = connect(URI.parse(@url))
        socket.write(head(READS.key?(command) ? "GET" : "POST", path, host(socket)))
        parse_response(read_all(socket))
      ensure
        socket&.close
      end

      def connect(uri)
        case uri.scheme
        when "tcp", "http" then Socket.tcp(uri.hostname, uri.port, connect_timeout: TIMEOUT)
        when "unix" then UNIXSocket.new(uri.path)
        else raise ConfigError, "control URL #{@url.inspect}: use tcp://HOST:PORT or unix:///PATH"
        end
      end

      # The address connected to, as the listener checks it (a name could be a rebinding one).
      def host(socket)
        address = socket.remote_address
        return "localhost" unless address.ip?
        "#{address.ipv6? ? "[#{address.ip_address}]" : address.ip_address}:#{address.ip_port}"
      end

      def head(method, path, host)
        auth = @token ? "authorization: Bearer #{@token}\r\n" : ""
        "#{method} #{path} HTTP/1.1\r\nhost: #{host}\r\n#{auth}content-length: 0\r\nconnection: close\r\n\r\n"
      end

      def read_all(socket)
        data = +""
        while socket.wait_readable(TIMEOUT) && (chunk = socket.read_nonblock(65_536, exception: false))
          data << chunk if chunk.is_a?(String)
        end
        data
      end

      def parse_response(data)
        head, body = data.split("\r\n\r\n", 2)
        status = head.to_s[%r{\AHTTP/1\.\d (\d{3})}, 1] or raise IOError, "no HTTP answer"
        [status.to_i, body.to_s]
      end
    end
  end
end
