# frozen_string_literal: true

module Heron
  module Response
    # Raised when the app returns a response that cannot be written safely (CR, LF or NUL in a
    # header value, an invalid header name). The connection answers 500.
    class Invalid < StandardError; end
  end
end
