# frozen_string_literal: true

require_relative "../usage_error"
require_relative "../schedule"
require_relative "checks"

module Heron
  module Attack
    class Options
      # The load offered: --rate (or a ramp), --stages, --duration, --requests, and the cap on
      # requests in flight (--connections). {#check!} turns them into the run's {Schedule}.
      class Load
        CALIBRATE_MAX_RATE = 100_000.0
        CALIBRATE_STEP = 2.0

        # @return [Float, nil] requests per second (the mean over the plan when the rate varies).
        # @return [Schedule, nil] the offered rate over time (set by {#check!}).
        attr_reader :rate, :schedule
        # @return [Float, nil] seconds to send for. @return [Integer, nil] requests to send.
        attr_reader :duration, :requests
        # @return [Integer, nil] concurrency cap; nil opens connections as needed (with --http2
        #   or a ws:// URL, connections, 1 unless given: see {#one_connection_per_process!}).
        attr_reader :connections

        # Defines --rate and --stages.
        # @param parser [OptionParser]
        # @return [void]
        def define_rate(parser)
          parser.on("-r", "--rate R", "requests per second (open loop); FROM..TO ramps linearly over --duration") do |v|
            @rate_range = Schedule.parse_rate(v)
          end
          parser.on("--stages LIST", "steps 'DURATION:RATE,...' (a stage may ramp: '60s:100..1000'); replaces -r/-d/-n") { |v| @stages = v }
        end

        # Defines --duration, --requests and --connections.
        # @param parser [OptionParser]
        # @return [void]
        def define_amount(parser)
          parser.on("-d", "--duration D", "how long to send: 10, 10s, 500ms, 2m") { |v| @duration = Checks.seconds(v) }
          parser.on("-n", "--requests N", Integer, "how many requests to send") { |v| @requests = v }
          parser.on("-c", "--connections C", Integer, "cap on requests in flight (default: no cap); with --http2, connections (default 1)") do |v|
            @connections = v
          end
        end

        # Checks an attack's plan (--rate with -d or -n, or --stages) and builds its schedule.
        # @return [void]
        # @raise [UsageError]
        def check!
          @stages ? stages! : rate!
          raise UsageError, "the run would send no requests" unless total_requests.positive?
          Checks.positive!(:connections, @connections) if @connections
        end

        # @return [Integer] how many requests the whole run sends.
        def total_requests
          @requests || @schedule.total
        end

        # @return [Boolean] whether the plan is one constant --rate: no --stages and no ramp.
        def steady?
          !@stages && @rate_range.uniq.size == 1
        end

        # --http2 and ws:// URLs open --connections connections (1 unless given), shared by the
        # processes.
        # @param processes [Integer] the generator processes.
        # @param what [String] what needs them, for the message.
        # @return [void]
        # @raise [UsageError] when a process would have none.
        def one_connection_per_process!(processes, what)
          @connections ||= 1
          raise UsageError, "#{what} needs at least one connection per process (--connections >= --processes)" if @connections < processes
        end

        # Replaces the plan by a fixed number of requests spread evenly over a span (a ws://
        # run's messages, at the whole run's mean rate).
        # @param requests [Integer]
        # @param span [Float] seconds.
        # @return [void]
        def spread!(requests, span)
          @requests = requests
          @rate = requests / span
          @schedule = Schedule.new([[span, @rate, @rate]])
        end

        # @return [Float] --calibrate's highest rate (--rate, or {CALIBRATE_MAX_RATE}).
        def calibrate_max_rate
          @rate_range ? @rate_range.last : CALIBRATE_MAX_RATE
        end

        # @return [Float] --calibrate's seconds per step (--duration, or {CALIBRATE_STEP}).
        def calibrate_step
          @duration || CALIBRATE_STEP
        end

        # --calibrate measures one process: no --stages or -n, and --rate is a ceiling, not a ramp.
        # @param processes [Integer] the --processes given.
        # @return [void]
        # @raise [UsageError]
        def calibrate!(processes)
          raise UsageError, "--calibrate takes no --stages, -n or --processes (it measures one process)" if @stages || @requests || processes != 1
          raise UsageError, "--calibrate takes --rate MAX, not a ramp" if @rate_range && @rate_range.first != @rate_range.last
        end

        # Checks --calibrate's step and makes its schedule: one step at the highest rate.
        # @return [void]
        # @raise [UsageError]
        def calibrate_plan!
          duration_positive!
          @schedule = Schedule.constant(calibrate_max_rate, calibrate_step)
        end

        private

        def stages!
          raise UsageError, "--stages replaces --rate, --duration and -n" if @rate_range || @duration || @requests
          @schedule = Schedule.parse_stages(@stages, ->(text) { Checks.seconds(text) })
          @duration = @schedule.duration
          @rate = @schedule.mean_rate
        end

        def rate!
          raise UsageError, "--rate must be given (or --stages)" unless @rate_range
          raise UsageError, "give exactly one of --duration or -n" unless @duration.nil? ^ @requests.nil?
          from, to = @rate_range
          raise UsageError, "a ramp (--rate FROM..TO) needs --duration, not -n" if from != to && @requests
          duration_positive!
          @schedule = Schedule.new([[@duration || (@requests / from), from, to]])
          @rate = from == to ? from : @schedule.mean_rate
        end

        def duration_positive!
          raise UsageError, "--duration must be positive" if @duration && !@duration.positive?
        end
      end
    end
  end
end
