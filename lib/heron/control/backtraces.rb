# frozen_string_literal: true

require "stringio"

module Heron
  module Control
    # The thing to look at when a fiber server hangs: every thread's backtrace, then every live
    # event loop's tree of Async tasks, each with the backtrace of where it is suspended (the
    # first line is what it waits on: `wait_readable`, `sleep`, a `Queue`…).
    module Backtraces
      module_function

      # @return [String] the report, plain text.
      def render
        out = StringIO.new
        out.puts("heron #{VERSION}, pid #{Process.pid}, #{Time.now.utc.iso8601(3)}")
        threads(out)
        tasks(out)
        out.string
      end

      # @param out [IO]
      def threads(out)
        Thread.list.each do |thread|
          out.puts("", "== thread #{thread.name || thread.object_id} (#{thread.status || 'dead'})")
          (thread.backtrace || []).each { |line| out.puts("   #{line}") }
        end
      end

      # @param out [IO]
      def tasks(out)
        ObjectSpace.each_object(Async::Scheduler).reject(&:closed?).each do |scheduler|
          out.puts("", "== event loop #{scheduler}")
          scheduler.print_hierarchy(out, backtrace: true)
        rescue StandardError => e # the tree changed under us: say so and go on
          out.puts("   (could not walk this loop: #{e.class}: #{e.message})")
        end
      end
    end
  end
end
