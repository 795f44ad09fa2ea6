# frozen_string_literal: true

module Heron
  module Attack
    # The target and achieved send rate of each stage of the plan that sends, over the same
    # window: the stage's own time, from its start to its end, or to when the last request due
    # in it was actually sent if that came later. Target = requests due in the stage ÷ its
    # length; achieved = those of them sent ÷ the window. A generator that keeps up sends each
    # stage's requests inside the stage, so the two agree; one that falls behind stretches the
    # window and the achieved rate drops by as much. A pause (no request due) is judged neither
    # way, so a plan ending in `30s:0` cannot dilute the target. The whole run's figures cover
    # the sending stages only: target over the sum of their lengths, achieved over the union of
    # their windows (a late stage's window can overlap the next one's).
    class StageRates
      # @param recorder [Recorder] @param schedule [Schedule]
      def initialize(recorder, schedule)
        @recorder = recorder
        @schedule = schedule
      end

      # @return [Array<Hash>] one row per sending stage in which something was sent (a stop can
      #   end the run before later stages): stage (0-based), start_s, duration_s, planned, sent,
      #   window_s, target, achieved, percent (achieved ÷ target × 100).
      def rows
        @rows ||= @schedule.stages.each_index.filter_map { |index| row(index) }
      end

      # @return [Hash] target and achieved over the sending stages (nil when nothing was sent).
      def overall
        return { "target" => nil, "achieved" => nil } if rows.empty?
        { "target" => (rows.sum { |r| r["planned"] } / rows.sum { |r| r["duration_s"] }).round(3),
          "achieved" => (rows.sum { |r| r["sent"] } / union(rows)).round(3) }
      end

      # @return [Hash, nil] the sending stage furthest below its target (nil when nothing was sent).
      def worst
        rows.min_by { |r| r["percent"] }
      end

      private

      def row(index)
        planned = @schedule.planned(index)
        sent, last = @recorder.stage_sends[index]
        return nil unless planned.positive? && sent
        stage = @schedule.stages[index]
        window = [stage.length, last - @recorder.start - stage.start].max
        target = planned / stage.length
        achieved = sent / window
        { "stage" => index, "start_s" => stage.start, "duration_s" => stage.length, "planned" => planned, "sent" => sent,
          "window_s" => window.round(6), "target" => target.round(3), "achieved" => achieved.round(3),
          "percent" => (100.0 * achieved / target).round(3) }
      end

      # The length of the union of the rows' windows (which are in order of start).
      def union(rows)
        rows.each_with_object([]) do |r, spans|
          from = r["start_s"]
          to = from + r["window_s"]
          spans.last && from <= spans.last[1] ? spans.last[1] = [spans.last[1], to].max : spans << [from, to]
        end.sum { |from, to| to - from }
      end
    end
  end
end
