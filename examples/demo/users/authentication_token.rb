# frozen_string_literal: true

require_relative "record"

module Demo
  module Users
    # An API token. `on_behalf` tokens are used by staff acting for the user, so they do not
    # count as the user logging in.
    class AuthenticationToken < Record
      many_to_one :user
    end
  end
end
