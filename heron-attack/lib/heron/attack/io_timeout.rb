# frozen_string_literal: true

module Heron
  module Attack
    # IO#timeout for Ruby 3.1, where async 2.24 asks for it whenever a fiber waits on an IO and
    # it does not exist yet (Ruby 3.2's default, nil: no timeout). heron-attack runs without the
    # heron gem, so it cannot use the server's Heron::Compat::IOTimeout.
    module IOTimeout
      # @return [nil] no default IO timeout (Ruby 3.2's default).
      def timeout = nil
    end
  end
end

IO.include(Heron::Attack::IOTimeout) unless IO.method_defined?(:timeout)
