# frozen_string_literal: true

module Heron
  module Profiler
    # Builds the W3C `Server-Timing` value for a request profile and appends it to whatever
    # `server-timing` the application set. Total time is not in it: headers leave before the
    # last byte does, so only what is known when the app returns is reported.
    class ServerTiming
      HEADER = "server-timing"

      # @param profile [RequestProfile] a profile whose app has returned.
      # @return [String] e.g. `app;dur=1.20, db;dur=0.31;desc="2 queries", queue;dur=0.05, ...`.
      def self.value(profile)
        metrics = ["app;dur=#{ms(profile.app_ms)}"]
        metrics << "db;dur=#{ms(profile.db_ms)};desc=\"#{profile.db_count} queries\""
        metrics << "queue;dur=#{ms(profile.queue_ms)}" if profile.queue_ms
        metrics << "cpu;dur=#{ms(profile.cpu_ms)}"
        metrics << "gc;desc=\"#{profile.gc_count} runs\""
        metrics << "alloc;desc=\"#{profile.allocations} objects\""
        metrics.join(", ")
      end

      # Adds the profile's metrics to the response headers, after any the app set.
      # @param headers [Hash] the response headers (lower-case names, Rack 3).
      # @param profile [RequestProfile]
      # @return [Hash] the headers.
      def self.append(headers, profile)
        headers[HEADER] = merge(headers[HEADER], value(profile))
        headers
      end

      # @param existing [String, Array<String>, nil] the app's value.
      # @param ours [String]
      # @return [String, Array<String>] the combined value, in the form the app used.
      def self.merge(existing, ours)
        return ours if existing.nil? || existing.empty?
        return existing + [ours] if existing.is_a?(Array)
        "#{existing}, #{ours}"
      end

      # @param value [Float]
      # @return [String] with two decimals.
      def self.ms(value)
        format("%.2f", value)
      end
    end
  end
end
