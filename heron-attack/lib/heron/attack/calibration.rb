# frozen_string_literal: true

require "json"
require "socket"
require "time"
require "fileutils"
require_relative "generator"
require_relative "schedule"
require_relative "stage_rates"
require_relative "cpu_set"
require_relative "usage_error"

module Heron
  module Attack
    # `heron attack --calibrate URL`: the highest rate one generator process sustains on this
    # machine. A stepped search, each step a short constant-rate run in this process: from
    # {START}/s the rate doubles until a step fails, then the gap is halved {BISECTIONS} times
    # (or until it is within 5%). A step is sustained when the generator's lateness p99 is under
    # {LATE_MS} ms, it achieved at least 99% of the rate, and no request failed without a status.
    # The result is saved (see {.path}) for `--processes auto`.
    class Calibration
      SCHEMA = "heron-attack-calibration/1"
      START = 250.0
      BISECTIONS = 3
      LATE_MS = 10.0
      MAX_FILE = 1 << 20

      # @param env [Hash] the environment.
      # @return [String] where a calibration is kept when --calibration is not given:
      #   $XDG_CACHE_HOME/heron-attack/calibration.json (~/.cache by default).
      def self.path(env = ENV)
        File.join(env["XDG_CACHE_HOME"] || File.join(Dir.home, ".cache"), "heron-attack", "calibration.json")
      end

      # @param path [String]
      # @return [Hash] the saved calibration.
      # @raise [UsageError] when there is none, or it is of another machine.
      def self.load(path)
        raise UsageError, "no calibration at #{path}: run heron attack --calibrate URL first" unless File.file?(path)
        raise UsageError, "#{path} is larger than #{MAX_FILE} bytes" if File.size(path) > MAX_FILE
        saved = JSON.parse(File.read(path))
        raise UsageError, "#{path} is not a heron attack calibration" unless saved.is_a?(Hash) && saved["schema"] == SCHEMA
        here = machine
        return saved if saved.values_at("host", "cpus") == here.values_at("host", "cpus")
        raise UsageError, "#{path} was measured on #{saved['host']} with CPUs #{saved['cpus']}, this is #{here['host']} " \
                          "with CPUs #{here['cpus']}: run heron attack --calibrate URL again"
      rescue JSON::ParserError => e
        raise UsageError, "#{path}: #{e.message[0, 80]}"
      end

      # Writes the calibration as JSON.
      # @param path [String] @param calibration [Hash]
      # @return [void]
      def self.save(path, calibration)
        FileUtils.mkdir_p(File.dirname(path))
        File.write(path, "#{JSON.pretty_generate(calibration)}\n")
      end

      # @return [Hash] host name and the CPUs this process may use.
      def self.machine
        { "host" => Socket.gethostname, "cpus" => CpuSet.mine.to_s }
      end

      # @param targets [TargetPicker] what to send.
      # @param max_rate [Float] the search goes no higher.
      # @param step [Float] seconds per step.
      # @param client [Hash] timeout:, keepalive:, tls:, connections:, max_streams: as for {Generator}
      #   ({Options#client_settings}).
      # @param output [IO] a line per step.
      def initialize(targets, max_rate:, step:, client:, output:)
        @targets = targets
        @max_rate = max_rate
        @step = step
        @client = client
        @output = output
        @steps = []
      end

      # Runs the search.
      # @return [Hash] the calibration: rate (0.0 when not even the lowest step held), its
      #   lateness p99, the steps, the machine, when.
      def run
        pass, fail = climb
        BISECTIONS.times do
          break if fail.nil? || fail - pass <= pass * 0.05
          middle = ((pass + fail) / 2.0).round
          sustains?(middle) ? pass = middle : fail = middle
        end
        result(pass)
      end

      private

      def climb
        pass = 0.0
        rate = [START, @max_rate].min
        loop do
          return [pass, rate] unless sustains?(rate)
          pass = rate
          return [pass, nil] if rate >= @max_rate
          rate = [rate * 2, @max_rate].min
        end
      end

      def sustains?(rate)
        schedule = Schedule.constant(rate, @step)
        recorder = Generator.new(@targets, schedule: schedule, total: schedule.total, **@client).run
        late = recorder.lateness.percentile(99) / 1000.0
        worst = StageRates.new(recorder, schedule).worst
        percent = worst ? worst["percent"] : 0.0
        ok = late < LATE_MS && percent >= 99 && recorder.error_count.zero?
        @steps << { "rate" => rate, "achieved_pct" => percent.round(2), "lateness_p99_ms" => late.round(3),
                    "errors" => recorder.error_count, "sustained" => ok }
        @output.puts(format("  %9.0f/s  achieved %6.2f%%  lateness p99 %8.2f ms  errors %d  %s", rate, percent, late,
                            recorder.error_count, ok ? "sustained" : "not sustained"))
        ok
      end

      def result(rate)
        held = @steps.select { |s| s["sustained"] && s["rate"] == rate }.last
        { "schema" => SCHEMA, "rate" => rate.to_f, "lateness_p99_ms" => held && held["lateness_p99_ms"],
          "criterion" => "lateness p99 < #{LATE_MS} ms, achieved >= 99%, no errors", "step_s" => @step,
          "measured_at" => Time.now.utc.iso8601, "ruby" => RUBY_DESCRIPTION, "steps" => @steps, **self.class.machine }
      end
    end
  end
end
