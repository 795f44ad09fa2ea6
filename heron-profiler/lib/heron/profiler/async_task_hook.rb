# frozen_string_literal: true

module Heron
  module Profiler
    # Prepended to `Async::Task`: a task started from a task that works for a profiled request
    # (`Async { }`, `Async::Barrier#async`, `task.async` inside the app) has its fiber charged to
    # that request's profile, and so do the tasks it starts in turn. Tasks the server starts
    # under its own tasks (after-reply callbacks) are not. It wraps the public `Task#async`,
    # through which `Kernel#Async`, `Async::Barrier` and `Async::Semaphore` start a child of the
    # current task, so it relies on nothing private to async: the child's block attaches the
    # child's fiber as its first act.
    module AsyncTaskHook
      # Installs the hook once.
      # @param task_class [Class] Async::Task.
      # @return [Boolean] whether the hook is in place.
      def self.install(task_class = ::Async::Task)
        return true if task_class.ancestors.include?(self)
        return false unless task_class.public_method_defined?(:async) && task_class.public_method_defined?(:fiber)
        task_class.prepend(self)
        true
      end

      # Starts a child task, attached to this task's request profile when there is one.
      # @param arguments [Array] passed on to the child's block.
      # @param options [Hash] Async::Task options (annotation:, transient:, …).
      # @return [Async::Task] the child.
      def async(*arguments, **options, &block)
        profile = Profiler.accounting.profile_for(fiber)
        return super unless block && profile && !profile.finished?
        super(*arguments, **options) do |*args|
          Profiler.accounting.attach(profile) unless profile.finished?
          block.call(*args)
        end
      end
    end
  end
end
