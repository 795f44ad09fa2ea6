# frozen_string_literal: true

module Bench
  # wrk results of one scenario by server and set-up (bench/run.rb): medians over rounds, and
  # Heron's ratio to another server as the median of the rounds' own ratios (the servers take
  # turns within a round, so a round's ratio compares runs made minutes apart, not half an hour).
  class ThroughputStats
    # @param samples [Hash{[String, String] => Array<Wrk::Result>}] by [server, set-up], in round order.
    def initialize(samples)
      @samples = samples
    end

    # @return [Array<Wrk::Result>]
    def results(name, setup) = @samples[[name, setup]]

    # @return [Float] median req/s.
    def rps(name, setup) = median(results(name, setup).map(&:rps))

    # @return [Float] median requests per second of the server's CPU time.
    def per_cpu(name, setup) = median(results(name, setup).map { |r| per_cpu_of(r) })

    # @return [Float] median over rounds of Heron's req/s divided by `name`'s.
    def rps_ratio(name, setup) = median(round_ratios(name, setup, &:rps))

    # @return [Float] median over rounds of Heron's requests per CPU-second divided by `name`'s.
    def per_cpu_ratio(name, setup) = median(round_ratios(name, setup) { |r| per_cpu_of(r) })

    # @return [Array<Float>] lowest and highest round's ratio of requests per CPU-second.
    def per_cpu_ratio_range(name, setup) = round_ratios(name, setup) { |r| per_cpu_of(r) }.minmax

    private

    def round_ratios(name, setup, &value)
      results("heron", setup).zip(results(name, setup)).filter_map do |heron, other|
        other && value.call(heron) / value.call(other)
      end
    end

    def per_cpu_of(result) = result.requests.fdiv(result.server_cpu_s)

    def median(values)
      sorted = values.sort
      mid = sorted.size / 2
      sorted.size.odd? ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0
    end
  end
end
