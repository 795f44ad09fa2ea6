# frozen_string_literal: true

require "json"

module Heron
  module Profiler
    class Flamegraph
      # The kept samples as a speedscope file (https://www.speedscope.app/file-format-schema.json):
      # one "sampled" profile, stacks root first, each sample weighing the sampling interval in
      # milliseconds. Open it at speedscope.app or with the `speedscope` command.
      class Speedscope
        SCHEMA = "https://www.speedscope.app/file-format-schema.json"

        # @param samples [Samples] the request's own samples.
        # @param name [String] the profile's name, e.g. "GET /users?step=1".
        def initialize(samples, name)
          @samples = samples
          @name = name
        end

        # @return [String] the JSON document.
        def render
          ids = @samples.frame_ids
          index = ids.each_with_index.to_h
          JSON.generate("$schema" => SCHEMA, "name" => @name, "exporter" => "heron-profiler #{Profiler::VERSION}",
                        "activeProfileIndex" => 0, "shared" => { "frames" => ids.map { |id| frame(id) } },
                        "profiles" => [profile(index)])
        end

        private

        def frame(id)
          frame = @samples.frame(id)
          { "name" => frame[:name], "file" => frame[:file], "line" => frame[:line] }.compact
        end

        def profile(index)
          step = @samples.interval / 1000.0
          weights = @samples.stacks.map { |_, count| count * step }
          { "type" => "sampled", "name" => @name, "unit" => "milliseconds", "startValue" => 0,
            "endValue" => weights.sum, "samples" => @samples.stacks.map { |stack, _| stack.map { |id| index[id] } },
            "weights" => weights }
        end
      end
    end
  end
end
