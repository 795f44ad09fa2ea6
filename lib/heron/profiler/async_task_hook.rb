# frozen_string_literal: true

module Heron
  module Profiler
    # Prepended to `Async::Task`: a task whose parent task works for a profiled request
    # (`Async { }`, `Async::Barrier#async`, `task.async` inside the app) has its fiber charged to
    # that request's profile, and so do the tasks it starts in turn. Tasks the server starts
    # under its own tasks (after-reply callbacks) are not. It hooks the private `schedule`, which
    # creates the task's fiber and runs it at once; the fiber attaches itself as its first act.
    module AsyncTaskHook
      # Installs the hook once.
      # @param task_class [Class] Async::Task.
      # @return [Boolean] whether the hook is in place.
      def self.install(task_class = ::Async::Task)
        return true if task_class.ancestors.include?(self)
        return false unless task_class.private_method_defined?(:schedule)
        task_class.prepend(self)
        true
      end

      private

      # @param block [Proc] the task's body, as Async passes it.
      def schedule(&block)
        profile = Profiler.accounting.profile_for(parent.is_a?(::Async::Task) ? parent.fiber : nil)
        return super unless profile && !profile.finished?
        super() do
          Profiler.accounting.attach(profile) unless profile.finished?
          block.call
        end
      end
    end
  end
end
