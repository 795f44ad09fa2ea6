# frozen_string_literal: true

module Heron
  # Raised when a peer does not send (or accept) bytes within the allowed time: a socket read or
  # write, a request body over HTTP/1.1 or HTTP/2, an HTTP/2 flow-control window that stays
  # closed. Apps reading `rack.input` see this one class whatever the protocol; it maps to 408.
  class TimeoutError < StandardError; end
end
