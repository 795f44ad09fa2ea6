# frozen_string_literal: true

module Heron
  module Attack
    # Raised when a server's response is not HTTP/1.x the client can read; counted as "other".
    class ProtocolError < StandardError; end
  end
end
