# frozen_string_literal: true

require_relative "usage_error"

module Heron
  module Attack
    # The offered load over time: a list of stages, each lasting some seconds while the rate goes
    # linearly from one value to another (equal values for a step). Request i of the plan is due
    # when the number of requests offered so far, the integral of the rate, reaches i; a
    # constant rate R gives the classic i / R. Built from `--rate R`, `--rate A..B` with
    # `--duration` (a ramp), or `--stages '30s:100,60s:1000..2000,30s:0'` (steps, ramps within).
    class Schedule
      MAX_STAGES = 100
      MAX_RATE = 10_000_000.0

      # @return [Array<Stage>]
      attr_reader :stages

      # @param rate [Float] a constant rate. @param seconds [Float] for how long.
      # @return [Schedule]
      def self.constant(rate, seconds)
        new([[seconds, rate, rate]])
      end

      # Parses "30s:100,60s:1000,30s:0" (each stage a duration and a rate, or a ramp "A..B").
      # @param text [String]
      # @param seconds [#call] turns "30s" into 30.0 (raises UsageError otherwise).
      # @return [Schedule]
      # @raise [UsageError]
      def self.parse_stages(text, seconds)
        parts = text.split(",", -1)
        raise UsageError, "--stages has more than #{MAX_STAGES} stages" if parts.size > MAX_STAGES
        new(parts.map do |part|
          length, rate = part.strip.split(":", 2)
          raise UsageError, "bad stage #{part.inspect} (want DURATION:RATE or DURATION:FROM..TO)" if rate.nil?
          [seconds.call(length), *parse_rate(rate, allow_zero: true)]
        end)
      end

      # @param text [String] "500" or "100..5000".
      # @param allow_zero [Boolean] whether 0 is a valid rate (a pause, inside --stages).
      # @return [Array(Float, Float)] the rates at the start and the end.
      # @raise [UsageError]
      def self.parse_rate(text, allow_zero: false)
        rates = text.strip.split("..", -1).map { |v| Float(v, exception: false) }
        ok = (1..2).cover?(rates.size) && rates.all? { |r| r&.finite? && r <= MAX_RATE && (allow_zero ? r >= 0 : r.positive?) }
        kind = allow_zero ? "a stage's rate must be a number from 0" : "--rate must be a positive number"
        raise UsageError, "#{kind} up to #{MAX_RATE.to_i}, or FROM..TO; got #{text[0, 40].inspect}" unless ok
        [rates.first, rates.last]
      end

      # @param stages [Array<Array(Float, Float, Float)>] length in seconds, rate at start, rate at end.
      # @raise [UsageError] for a stage with no length or a plan that offers no requests.
      def initialize(stages)
        before = start = 0.0
        @stages = stages.map do |length, from, to|
          raise UsageError, "a stage must last more than 0s" unless length.positive?
          Stage.new(start, length.to_f, from.to_f, to.to_f, before).tap do |stage|
            start += length
            before += stage.count
          end
        end
        @total = before
        @current = 0
      end

      # @return [Integer] requests the plan offers in all.
      def total
        (@total + 1e-9).floor
      end

      # @return [Float] the plan's length in seconds.
      def duration
        @stages.last.start + @stages.last.length
      end

      # @return [Float] requests per second over the whole plan.
      def mean_rate
        @total / duration
      end

      # @return [Float] the highest rate the plan offers at any time.
      def peak_rate
        @stages.map { |s| [s.from, s.to].max }.max
      end

      # @return [Boolean] whether the rate ever changes.
      def varying?
        @stages.any? { |s| s.from != s.to } || @stages.map(&:from).uniq.size > 1
      end

      # @param index [Integer] a request's index, 0 ... {#total}.
      # @return [Float] seconds after the start when it is due.
      def due(index)
        stage = stage_for(index)
        stage.start + stage.time_for(index - stage.before)
      end

      # @param index [Integer] a request's index, 0 ... {#total}.
      # @return [Integer] the stage (0-based) it is due in.
      def stage_index(index)
        stage_for(index)
        @current
      end

      # The requests due in a stage: those whose index the stage's share of the integral covers
      # (the last stage also takes any rounding remainder). A pause (rate 0) has none.
      # @param stage [Integer] a stage's index.
      # @return [Integer] how many requests are due in it.
      def planned(stage)
        s = @stages.fetch(stage)
        last = stage == @stages.size - 1 ? total : [(s.before + s.count).ceil, total].min
        [last - s.before.ceil, 0].max
      end

      # @param time [Float] seconds since the start.
      # @return [Float] the offered rate then (0 after the end).
      def rate_at(time)
        stage = @stages.reverse_each.find { |s| s.start <= time } or return 0.0
        return 0.0 if time >= stage.start + stage.length
        stage.from + ((stage.to - stage.from) * (time - stage.start) / stage.length)
      end

      # @param from [Float] @param to [Float] seconds since the start.
      # @return [Float] requests offered between the two times.
      def offered(from, to)
        count_until(to) - count_until(from)
      end

      # @return [Array<Hash>] the stages for the report: start_s, duration_s, from, to.
      def to_a
        @stages.map { |s| { "start_s" => s.start, "duration_s" => s.length, "from" => s.from, "to" => s.to } }
      end

      private

      # Requests arrive in order, so the search usually stays in the stage of the last one.
      def stage_for(index)
        @current = 0 if index < @stages[@current].before
        @current += 1 while @current < @stages.size - 1 && index >= @stages[@current].before + @stages[@current].count
        @stages[@current]
      end

      def count_until(time)
        @stages.sum do |s|
          t = (time - s.start).clamp(0.0, s.length)
          (s.from * t) + ((s.to - s.from) * t * t / (2 * s.length))
        end
      end
    end
  end
end

require_relative "schedule/stage"
