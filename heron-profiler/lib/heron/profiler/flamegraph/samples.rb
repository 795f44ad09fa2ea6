# frozen_string_literal: true

module Heron
  module Profiler
    class Flamegraph
      # A stackprof result (`raw: true`) cut down to the samples taken while the request's own
      # fibers ran ({FiberIntervals}); the others (another request's fiber, the event loop, or
      # a thread of its own in the same interval) are counted as foreign and left out.
      class Samples
        # @return [Array<Array(Array<Integer>, Integer)>] [frame ids root first, samples] of
        #   the kept samples, in the order they were taken.
        attr_reader :stacks
        # @return [Integer] samples kept.
        attr_reader :kept
        # @return [Integer] samples taken while another fiber ran, left out.
        attr_reader :foreign
        # @return [Integer] microseconds between samples.
        attr_reader :interval

        # @param result [Hash] what `StackProf.run(raw: true)` returned.
        # @param intervals [#cover?] when the request's fibers ran.
        def initialize(result, intervals)
          @frames = result[:frames] || {}
          @interval = result[:interval].to_i
          @stacks = []
          @kept = @foreign = 0
          split(Array(result[:raw]), Array(result[:raw_sample_timestamps]), intervals)
        end

        # @param id [Integer] a frame id from {#stacks}.
        # @return [Hash] {name:, file:, line:} of the frame.
        def frame(id)
          frame = @frames[id] || {}
          { name: frame[:name] || "(unknown)", file: frame[:file], line: frame[:line] }
        end

        # @return [Array<Integer>] the ids of the frames the kept samples hold.
        def frame_ids
          @stacks.flat_map(&:first).uniq
        end

        private

        # stackprof's raw list is [depth, frame ids..., repeats] per run of equal stacks, and one
        # timestamp per sample.
        def split(raw, timestamps, intervals)
          index = position = 0
          while index < raw.size
            depth = raw[index]
            repeats = raw[index + depth + 1]
            own = timestamps[position, repeats].count { |stamp| intervals.cover?(stamp) }
            keep(raw[index + 1, depth], own, repeats - own)
            index += depth + 2
            position += repeats
          end
        end

        def keep(stack, own, foreign)
          @foreign += foreign
          return if own.zero?
          @kept += own
          @stacks << [stack, own]
        end
      end
    end
  end
end
