# frozen_string_literal: true

module Heron
  module Compat
    # async 2.24 (the last release for Ruby 3.1) calls IO#timeout whenever a fiber waits on an IO
    # without an explicit timeout, but IO#timeout only exists from Ruby 3.2. Without it, every
    # `io.wait_readable` with no argument — in Heron or in an app running on Heron — raises
    # NoMethodError under the scheduler. Ruby 3.2's IO#timeout defaults to nil ("no timeout"), so
    # defining exactly that on older Rubies gives the behaviour async expects and changes nothing
    # else. Included into IO only where IO#timeout is missing.
    module IOTimeout
      # @return [nil] no default IO timeout (Ruby 3.2's default).
      def timeout = nil
    end
  end
end

IO.include(Heron::Compat::IOTimeout) unless IO.method_defined?(:timeout)
