# frozen_string_literal: true

require "optparse"
require_relative "usage_error"
require_relative "options/load"
require_relative "options/processes"
require_relative "options/client"
require_relative "options/web_socket"
require_relative "options/request"
require_relative "options/tls"
require_relative "options/output"
require_relative "options/thresholds"

module Heron
  module Attack
    # The parsed command line of `heron attack`. {#parse!} fills it from argv and checks it;
    # every problem raises {UsageError} with a one-line message. Each group of options is its
    # own object, which defines them, holds their defaults and checks them ({#load},
    # {#processes}, {#client}, {#web_socket}, {#request}, {#tls}, {#output}, {#thresholds});
    # Options holds the URL, --help, the order of the help and the checks across groups.
    class Options
      # The most generator processes (--processes).
      MAX_PROCESSES = Processes::MAX
      BANNER = "Usage: heron attack URL --rate R (--duration D | -n N) [options]\n" \
               "       heron attack URL --rate FROM..TO --duration D [options]\n" \
               "       heron attack URL --stages '30s:100,60s:1000,30s:0' [options]\n" \
               "       heron attack --compare A.json B.json [C.json ...] [--html OUT.html]\n" \
               "       heron attack --calibrate URL [--rate MAX] [--duration STEP]"

      # @return [String, nil] the target URL (nil with --targets or --compare).
      attr_accessor :url
      # @return [Boolean] --help was given.
      attr_reader :help
      # @return [Load] the rate, plan and connections. @return [Processes] the generator processes.
      attr_reader :load, :processes
      # @return [Client] timeout, keep-alive, HTTP/2. @return [WebSocket] a ws:// run's plan.
      attr_reader :client, :web_socket
      # @return [Request] what is sent. @return [TLS] how certificates are checked.
      attr_reader :request, :tls
      # @return [Output] the files written, or --compare. @return [Thresholds] --fail-if, --knee.
      attr_reader :output, :thresholds

      # Starts from each group's defaults.
      def initialize
        @help = false
        @load = Load.new
        @processes = Processes.new
        @client = Client.new
        @web_socket = WebSocket.new
        @request = Request.new
        @tls = TLS.new
        @output = Output.new
        @thresholds = Thresholds.new
      end

      # @param argv [Array<String>]
      # @return [Options] a checked set of options.
      # @raise [UsageError]
      def self.parse(argv)
        new.parse!(argv.dup)
      end

      # @param argv [Array<String>] consumed.
      # @return [self]
      # @raise [UsageError]
      def parse!(argv)
        rest = parser.parse(argv)
        return self if @help
        @output.take_compared!(rest)
        @url = rest.shift
        raise UsageError, "unexpected argument #{rest.first.inspect}" unless rest.empty?
        validate!
      rescue OptionParser::ParseError => e
        raise UsageError, e.message
      end

      # @return [Boolean] whether the URL is ws:// or wss://: a WebSocket echo run.
      def websocket?
        @url.to_s.match?(%r{\Awss?://}i)
      end

      # @return [String, nil] the URL requests are built from: a ws:// URL as http://, wss:// as
      #   https:// (the upgrade is an HTTP/1.1 request).
      def request_url
        websocket? ? @url.sub(/\Aws/i, "http") : @url
      end

      # @return [Hash] timeout:, keepalive:, tls:, connections: and max_streams: for a {Generator}
      #   (or {Calibration}'s client): the client's settings from the groups that hold them.
      def client_settings
        { timeout: @client.timeout, keepalive: @client.keepalive, tls: @tls.context, connections: @load.connections,
          max_streams: @client.max_streams }
      end

      # @return [OptionParser] the parser, also used to print --help: the groups' options in
      #   the help's order (load, then the request, the output and CI).
      def parser
        OptionParser.new do |o|
          o.banner = BANNER
          @load.define_rate(o)
          @thresholds.define_knee(o)
          @load.define_amount(o)
          [@processes, @client, @web_socket, @request, @tls, @output].each { |group| group.define(o) }
          o.on("-h", "--help", "show this help") { @help = true }
          @thresholds.define_fail_if(o)
        end
      end

      private

      def validate!
        return compare! if @output.compare
        target!
        return calibrate! if @processes.calibrate
        attack!
        self
      end

      def compare!
        @output.check_compare!
        self
      end

      def target!
        raise UsageError, "give a URL or --targets FILE" if @url.nil? && @request.targets_file.nil?
        raise UsageError, "give either a URL or --targets, not both" if @url && @request.targets_file
        @tls.check!(@client.alpn)
      end

      def calibrate!
        raise UsageError, "--calibrate takes a URL, not --targets" unless @url
        @load.calibrate!(@processes.count)
        raise UsageError, "--calibrate measures HTTP requests: give an http:// or https:// URL" if websocket?
        @load.calibrate_plan!
        http2! if @client.http2
        self
      end

      def attack!
        @load.check!
        @processes.check!(@load.schedule.peak_rate)
        @client.check!
        http2! if @client.http2
        websocket! if websocket?
      end

      def http2!
        @client.http2!
        @load.one_connection_per_process!(@processes.count, "--http2")
      end

      # ws://: --connections connections, each sending --rate messages a second for --duration
      # (or -n messages); the plan's rate is the whole run's mean, openings included.
      def websocket!
        raise UsageError, "a ws:// URL takes --rate with --duration or -n (per connection), not --stages or a ramp" unless @load.steady?
        if @client.http2 || @request.method != "GET" || !@client.keepalive || @output.per_request
          raise UsageError, "a ws:// URL takes neither --http2, -X, --no-keepalive nor --per-request"
        end
        @web_socket.check!
        @load.one_connection_per_process!(@processes.count, "a ws:// URL")
        @web_socket.plan!(@load)
      end
    end
  end
end
