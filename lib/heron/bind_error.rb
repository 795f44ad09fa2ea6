# frozen_string_literal: true

module Heron
  # Raised when a listener cannot be opened (address in use, bad path, no permission).
  class BindError < StandardError; end
end
