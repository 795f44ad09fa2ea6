# frozen_string_literal: true

# Ruby 3.2 added IO#timeout (nil unless set), and async 2.24's scheduler reads it every time a
# fiber waits on an IO. On Ruby 3.1 the method is missing, so every wait would raise
# NoMethodError; this gives 3.1 the 3.2 default: no timeout.
unless IO.method_defined?(:timeout)
  class IO
    # @return [nil] no per-IO timeout (the Ruby 3.2 default).
    def timeout
      nil
    end
  end
end
