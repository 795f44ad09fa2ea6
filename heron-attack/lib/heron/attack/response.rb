# frozen_string_literal: true

module Heron
  module Attack
    # What one HTTP exchange returned: the status, how many body bytes came back, and whether
    # the connection may carry another request.
    Response = Struct.new(:status, :bytes, :keepalive)
  end
end
