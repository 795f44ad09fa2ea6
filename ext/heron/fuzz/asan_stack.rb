# frozen_string_literal: true

# Test tooling for ruby_asan (see asan_stack.c): clears stale stack poison before each test, on each
# fiber switch (the dead part of the stack switched to) and on each raise (the frames the exception
# is about to unwind, up to 64 KiB over the raise).
require "fiddle"
require "minitest"

# Loads asan_stack.so (ASAN_STACK_SO) and hooks its reset into Ruby and Minitest.
module HeronAsanStack
  RESET = Fiddle::Function.new(Fiddle.dlopen(ENV.fetch("ASAN_STACK_SO"))["heron_asan_stack_reset"],
                               [Fiddle::TYPE_LONG], Fiddle::TYPE_VOID)

  # Minitest's hook: a test starts on a stack with no stale poison.
  module Reset
    def before_setup
      RESET.call(0)
      super
    end
  end

  TracePoint.new(:fiber_switch) { RESET.call(0) }.enable
  TracePoint.new(:raise) { RESET.call(64 * 1024) }.enable
  Minitest::Test.prepend(Reset)
end
