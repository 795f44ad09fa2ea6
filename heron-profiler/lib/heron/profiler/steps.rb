# frozen_string_literal: true

module Heron
  module Profiler
    # A request's custom steps ({Profiler.step}), kept in its {RequestProfile}'s `extras` under
    # `:steps` ({name => [total_ms, runs]}), which the profile's C `server_timing` reads.
    class Steps
      # Distinct custom step names a request keeps; later names are added up under {OTHER}.
      KEPT = 16
      OTHER = "other-steps"
      # Server-Timing names of the profiler's own entries, which a step name may not take.
      RESERVED = %w[app db queue cpu gc alloc heron].freeze

      # Adds a custom step's time to a profile: runs of one name add up.
      # @param profile [RequestProfile]
      # @param name [String, Symbol] the step's name; made an HTTP token of at most 32 bytes.
      # @param ms [Float] how long it took.
      # @return [void]
      def self.add(profile, name, ms)
        steps = ((profile.extras ||= {})[:steps] ||= {})
        key = name_for(name)
        key = OTHER if !steps.key?(key) && steps.size >= KEPT
        timing = (steps[key] ||= [0.0, 0])
        timing[0] += ms
        timing[1] += 1
      end

      # @param name [String, Symbol] a step's name as given.
      # @return [String] the name as a Server-Timing metric name (token characters only, at most
      #   32 bytes, never one of {RESERVED}).
      def self.name_for(name)
        token = name.to_s.gsub(/[^!#$%&'*+\-.^_`|~0-9A-Za-z]+/, "-").byteslice(0, 32).to_s
        token = "step" if token.empty?
        RESERVED.include?(token) ? "step-#{token}"[0, 32] : token
      end

      # @param profile [RequestProfile]
      # @return [Array<Hash>] its custom steps: {name:, ms:, count:}, in the order first run.
      def self.of(profile)
        extras = profile.extras
        Hash(extras && extras[:steps]).map { |name, (ms, count)| { name: name, ms: ms, count: count } }
      end
    end
  end
end
