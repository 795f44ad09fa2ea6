# frozen_string_literal: true

require "optparse"
require_relative "usage_error"
require_relative "threshold"
require_relative "schedule"
require_relative "tls_context"
require_relative "calibration"
require_relative "process_count"

module Heron
  module Attack
    # The parsed command line of `heron attack`. {#parse!} fills it from argv and checks it;
    # every problem raises {UsageError} with a one-line message.
    class Options
      MAX_PROCESSES = 256
      MAX_THRESHOLDS = 32
      MAX_COMPARE = 8
      MAX_STREAMS = 10_000
      BANNER = "Usage: heron attack URL --rate R (--duration D | -n N) [options]\n" \
               "       heron attack URL --rate FROM..TO --duration D [options]\n" \
               "       heron attack URL --stages '30s:100,60s:1000,30s:0' [options]\n" \
               "       heron attack --compare A.json B.json [C.json ...] [--html OUT.html]\n" \
               "       heron attack --calibrate URL [--rate MAX] [--duration STEP]"
      CALIBRATE_MAX_RATE = 100_000.0
      CALIBRATE_STEP = 2.0

      # @return [String, nil] the target URL (nil with --targets or --compare).
      attr_accessor :url
      # @return [Float, nil] requests per second (the mean over the plan when the rate varies).
      attr_accessor :rate
      # @return [Schedule, nil] the offered rate over time (set by {#parse!}).
      attr_accessor :schedule
      # @return [Array<Threshold>] the --knee conditions.
      attr_accessor :knee
      # @return [Float, nil] seconds to send for. @return [Integer, nil] requests to send.
      attr_accessor :duration, :requests
      # @return [Integer, nil] concurrency cap; nil opens connections as needed.
      attr_accessor :connections
      # @return [String] request method. @return [Array<String>] extra header lines.
      attr_accessor :method, :headers
      # @return [String, nil] request body (from --body or --body-file).
      attr_accessor :body
      # @return [Float] per-request timeout in seconds.
      attr_accessor :timeout
      # @return [Boolean] reuse connections. @return [Boolean] print a line per request.
      attr_accessor :keepalive, :per_request
      # @return [String, nil] targets file, JSON output, HTML output.
      attr_accessor :targets_file, :json, :html
      # @return [String, nil] HdrHistogram interval log output, per-second CSV output.
      attr_accessor :hdr_log, :csv
      # @return [Array<String>, nil] the JSON files of --compare (2 to {MAX_COMPARE}).
      attr_accessor :compare
      # @return [Integer] generator processes. @return [Boolean] --help was given.
      attr_accessor :processes, :help
      # @return [String] how targets are chosen: "round-robin" or "random".
      # @return [Integer] the seed of "random".
      attr_accessor :pick, :seed
      # @return [Array<Threshold>] the --fail-if conditions.
      attr_accessor :thresholds
      # @return [Boolean] --http2: HTTP/2 (h2 over TLS, h2c with prior knowledge over TCP).
      # @return [Integer] --max-streams: requests at once per HTTP/2 connection (default 100).
      attr_accessor :http2, :max_streams
      # @return [Float] ws://: connections opened per second (default 100).
      # @return [Integer, nil] ws://: messages each connection sends (set by {#parse!}).
      # @return [Float, nil] ws://: messages per second on each connection (the --rate given).
      attr_accessor :connect_rate, :messages, :message_rate
      # @return [Boolean] --insecure: do not verify https certificates.
      # @return [String, nil] --cacert: the CA file https certificates are verified against.
      attr_accessor :insecure, :cacert
      # @return [Boolean] --calibrate: measure one process's ceiling instead of attacking.
      attr_accessor :calibrate
      # @return [String] the calibration file (--calibration, or {Calibration.path}).
      attr_writer :calibration
      # @return [ProcessCount, nil] how --processes auto chose (set by {#parse!}).
      attr_reader :process_count
      # @return [OpenSSL::SSL::SSLContext, nil] the https context when --insecure or --cacert was
      #   given (set by {#parse!}); nil lets the client verify against the system's CAs.
      attr_reader :tls_context

      # Starts from the defaults: GET, no headers, 30 s timeout, keep-alive, one process.
      def initialize
        @method = "GET"
        @headers = []
        @timeout = 30.0
        @keepalive = true
        @per_request = false
        @processes = 1
        @help = false
        @thresholds = []
        @knee = []
        @pick = "round-robin"
        @seed = Random.new_seed % (2**31)
        @insecure = false
        @http2 = false
        @max_streams = 100
        @connect_rate = 100.0
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
        @compare&.concat(rest.slice!(0..))
        @url = rest.shift
        raise UsageError, "unexpected argument #{rest.first.inspect}" unless rest.empty?
        validate!
      rescue OptionParser::ParseError => e
        raise UsageError, e.message
      end

      # @return [String] where the calibration is written (--calibrate) and read (--processes auto).
      def calibration
        @calibration || Calibration.path
      end

      # @return [Float] --calibrate's highest rate (--rate, or {CALIBRATE_MAX_RATE}).
      def calibrate_max_rate
        @rate_range ? @rate_range.last : CALIBRATE_MAX_RATE
      end

      # @return [Float] --calibrate's seconds per step (--duration, or {CALIBRATE_STEP}).
      def calibrate_step
        @duration || CALIBRATE_STEP
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

      # @return [Integer] how many requests the whole run sends.
      def total_requests
        @requests || @schedule.total
      end

      # @return [OptionParser] the parser, also used to print --help.
      def parser
        OptionParser.new do |o|
          o.banner = BANNER
          load_options(o)
          request_options(o)
          output_options(o)
          ci_options(o)
        end
      end

      private

      def load_options(o)
        o.on("-r", "--rate R", "requests per second (open loop); FROM..TO ramps linearly over --duration") do |v|
          @rate_range = Schedule.parse_rate(v)
        end
        o.on("--stages LIST", "steps 'DURATION:RATE,...' (a stage may ramp: '60s:100..1000'); replaces -r/-d/-n") { |v| @stages = v }
        o.on("--knee COND", "mark the first second where COND holds, e.g. 'p99>100ms', 'errors>1%' (repeatable)") do |v|
          @knee << knee_condition(v)
        end
        o.on("-d", "--duration D", "how long to send: 10, 10s, 500ms, 2m") { |v| @duration = seconds(v) }
        o.on("-n", "--requests N", Integer, "how many requests to send") { |v| @requests = v }
        o.on("-c", "--connections C", Integer, "cap on requests in flight (default: no cap); with --http2, connections (default 1)") do |v|
          @connections = v
        end
        o.on("--processes N", "generator processes (default 1, at most #{MAX_PROCESSES}), or auto (from --calibrate)") do |v|
          @processes = v == "auto" ? :auto : Integer(v, exception: false) || raise(UsageError, "--processes takes a number or auto, not #{v.inspect}")
        end
        o.on("--calibrate", "measure the highest rate one process sustains here (lateness p99 < 10ms); see docs") { @calibrate = true }
        o.on("--calibration FILE", "where --calibrate writes and --processes auto reads (default #{Calibration.path.sub(Dir.home, '~')})") do |v|
          @calibration = v
        end
        o.on("--timeout T", "per-request timeout (default 30s)") { |v| @timeout = seconds(v) }
        o.on("--[no-]keepalive", "reuse connections (default on)") { |v| @keepalive = v }
        o.on("--http2", "HTTP/2: h2 by ALPN for https://, h2c with prior knowledge for http://") { @http2 = true }
        o.on("--max-streams N", Integer, "with --http2: requests at once per connection (default 100)") { |v| @max_streams = v }
        o.on("--connect-rate R", Float, "ws://: WebSocket connections opened per second (default 100)") { |v| @connect_rate = v }
      end

      def request_options(o)
        o.on("-X", "--method M", "request method (default GET)") { |v| @method = v }
        o.on("-H", "--header 'Name: value'", "add a header (repeatable)") { |v| @headers << header(v) }
        o.on("--body STRING", "request body") { |v| @body = v }
        o.on("--body-file FILE", "request body from a file") { |v| @body = read_body(v) }
        o.on("--targets FILE", "targets: 'METHOD URL [weight=N]', then 'Name: value' lines, '@FILE' or '@@TEXT' body") { |v| @targets_file = v }
        o.on("--pick MODE", %w[round-robin random], "choose targets round-robin (default) or at random, by weight") { |v| @pick = v }
        o.on("--seed N", Integer, "seed for --pick random (default: a new one, printed in the JSON)") { |v| @seed = v }
        o.on("-k", "--insecure", "https: do not verify the certificate (self-signed staging certificates)") { @insecure = true }
        o.on("--cacert FILE", "https: trust the CA certificates in this PEM file instead of the system's") { |v| @cacert = v }
      end

      def output_options(o)
        o.on("--per-request", "print 'request N status=S latency=Xms' lines") { @per_request = true }
        o.on("--json FILE", "write the report as JSON") { |v| @json = v }
        o.on("--html FILE", "write a self-contained HTML page with charts") { |v| @html = v }
        o.on("--hdr-log FILE", "write an HdrHistogram interval log (per-second corrected latency, us)") { |v| @hdr_log = v }
        o.on("--csv FILE", "write per-second stats as CSV") { |v| @csv = v }
        o.on("--compare A.json B.json ...", "compare --json runs: a table of percentiles and ratios to A (and --html)") { |v| @compare = [v] }
        o.on("-h", "--help", "show this help") { @help = true }
      end

      def ci_options(o)
        o.on("--fail-if COND", "exit 3 when COND holds, e.g. 'p99>250ms', 'errors>0.1%', 'rate<99%' (repeatable)") do |v|
          raise UsageError, "at most #{MAX_THRESHOLDS} --fail-if conditions" if @thresholds.size >= MAX_THRESHOLDS
          @thresholds << Threshold.new(v)
        end
      end

      def knee_condition(text)
        raise UsageError, "at most #{MAX_THRESHOLDS} --knee conditions" if @knee.size >= MAX_THRESHOLDS
        condition = Threshold.new(text)
        raise UsageError, "--knee takes p50, p99, max or errors, not #{condition.metric}" unless condition.per_second?
        condition
      end

      def seconds(text)
        match = text.match(/\A(\d+(?:\.\d+)?)(ms|s|m)?\z/) or raise UsageError, "bad duration #{text.inspect}"
        match[1].to_f * { "ms" => 0.001, "m" => 60.0 }.fetch(match[2], 1.0)
      end

      def header(text)
        raise UsageError, "bad header #{text.inspect} (want 'Name: value')" unless text.match?(/\A[^:\s]+:/)
        text
      end

      def read_body(path)
        File.binread(path)
      rescue SystemCallError => e
        raise UsageError, "cannot read body file: #{e.message}"
      end

      def validate!
        return validate_compare! if @compare
        validate_target!
        return validate_calibrate! if @calibrate
        validate_load!
        self
      end

      def validate_calibrate!
        raise UsageError, "--calibrate takes a URL, not --targets" unless @url
        raise UsageError, "--calibrate takes no --stages, -n or --processes (it measures one process)" if @stages || @requests || @processes != 1
        raise UsageError, "--calibrate takes --rate MAX, not a ramp" if @rate_range && @rate_range.first != @rate_range.last
        raise UsageError, "--calibrate measures HTTP requests: give an http:// or https:// URL" if websocket?
        raise UsageError, "--duration must be positive" if @duration && !@duration.positive?
        http2! if @http2
        @schedule = Schedule.constant(calibrate_max_rate, calibrate_step)
        self
      end

      def validate_compare!
        raise UsageError, "--compare takes two or more files: --compare A.json B.json [C.json ...]" if @compare.size < 2
        raise UsageError, "--compare takes at most #{MAX_COMPARE} files" if @compare.size > MAX_COMPARE
        self
      end

      def validate_target!
        raise UsageError, "give a URL or --targets FILE" if @url.nil? && @targets_file.nil?
        raise UsageError, "give either a URL or --targets, not both" if @url && @targets_file
        raise UsageError, "give --insecure or --cacert, not both" if @insecure && @cacert
        alpn = @http2 ? ["h2"] : ["http/1.1"]
        @tls_context = TLSContext.build(insecure: @insecure, cacert: @cacert, alpn: alpn) if @insecure || @cacert
      end

      def validate_load!
        @stages ? stages! : rate!
        raise UsageError, "the run would send no requests" unless total_requests.positive?
        positive!(:connections, @connections) if @connections
        processes!
        raise UsageError, "--timeout must be positive" unless @timeout.positive?
        http2! if @http2
        websocket! if websocket?
      end

      # ws://: --connections connections, each sending --rate messages a second for --duration
      # (or -n messages); the plan's rate is the whole run's mean, openings included.
      def websocket!
        raise UsageError, "a ws:// URL takes --rate with --duration or -n (per connection), not --stages or a ramp" if @stages || @rate_range.uniq.size > 1
        raise UsageError, "a ws:// URL takes neither --http2, -X, --no-keepalive nor --per-request" if @http2 || @method != "GET" || !@keepalive || @per_request
        raise UsageError, "--connect-rate must be positive" unless @connect_rate.positive?
        @connections ||= 1
        raise UsageError, "a ws:// URL needs at least one connection per process (--connections >= --processes)" if @connections < @processes
        websocket_plan!
      end

      def websocket_plan!
        @message_rate = @rate
        @messages = @requests || (@rate * @duration).floor
        raise UsageError, "the run would send no messages" unless @messages.positive?
        span = ((@connections - 1) / @connect_rate) + (@messages / @rate)
        @requests = @connections * @messages
        @rate = @requests / span
        @schedule = Schedule.new([[span, @rate, @rate]])
      end

      def http2!
        raise UsageError, "--no-keepalive does not apply to --http2 (streams share connections)" unless @keepalive
        positive!(:"max-streams", @max_streams)
        raise UsageError, "--max-streams must be at most #{MAX_STREAMS}" if @max_streams > MAX_STREAMS
        @connections ||= 1
        raise UsageError, "--http2 needs at least one connection per process (--connections >= --processes)" if @connections < @processes
      end

      def stages!
        raise UsageError, "--stages replaces --rate, --duration and -n" if @rate_range || @duration || @requests
        @schedule = Schedule.parse_stages(@stages, ->(text) { seconds(text) })
        @duration = @schedule.duration
        @rate = @schedule.mean_rate
      end

      def rate!
        raise UsageError, "--rate must be given (or --stages)" unless @rate_range
        raise UsageError, "give exactly one of --duration or -n" unless @duration.nil? ^ @requests.nil?
        from, to = @rate_range
        raise UsageError, "a ramp (--rate FROM..TO) needs --duration, not -n" if from != to && @requests
        raise UsageError, "--duration must be positive" if @duration && !@duration.positive?
        @schedule = Schedule.new([[@duration || (@requests / from), from, to]])
        @rate = from == to ? from : @schedule.mean_rate
      end

      def processes!
        if @processes == :auto
          @process_count = ProcessCount.new(Calibration.load(calibration), @schedule.peak_rate, MAX_PROCESSES)
          @processes = @process_count.count
        end
        positive!(:processes, @processes)
        raise UsageError, "--processes must be at most #{MAX_PROCESSES}" if @processes > MAX_PROCESSES
      end

      def positive!(name, value)
        raise UsageError, "--#{name} must be a positive integer" unless value.positive?
      end
    end
  end
end
