# frozen_string_literal: true

module Heron
  module Profiler
    # Builds the W3C `Server-Timing` value for a request profile and appends it to whatever
    # `server-timing` the application set. Total time is not in it: headers leave before the
    # last byte does, so only what is known when the app returns is reported.
    class ServerTiming
      HEADER = "server-timing"
      METRICS = 'app;dur=%.2f, db;dur=%.2f;desc="%d queries"%s, cpu;dur=%.2f, gc;desc="%d runs", alloc;desc="%d objects"'
      QUEUE = ", queue;dur=%.2f"

      # @param profile [RequestProfile] a profile whose app has returned.
      # @return [String] e.g. `app;dur=1.20, db;dur=0.31;desc="2 queries", queue;dur=0.05, ...`.
      def self.value(profile)
        queue = profile.queue_ms ? format(QUEUE, profile.queue_ms) : ""
        format(METRICS, profile.app_ms, profile.db_ms, profile.db_count, queue, profile.cpu_ms, profile.gc_count,
               profile.allocations)
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
    end
  end
end
