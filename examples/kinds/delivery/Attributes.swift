import ActivityKit
import Foundation

// A food-delivery tracker as a delivery app declares it (tab indentation, sentence raw values).
struct DeliveryActivityAttributes: ActivityAttributes {
	public struct ContentState: Codable, Hashable {
		var status: DeliveryStatus
		var estimatedDeliveryTime: Date
		var courierName: String?
	}

	enum DeliveryStatus: String, Codable, Hashable {
		case confirmed = "Your order has been confirmed"
		case preparing = "The restaurant is preparing your order"
		case onTheWay = "Your courier is on the way"
		case delivered = "Delivered. Enjoy your meal!"
	}

	var restaurantName: String
	var orderNumber: String
	var items: [String]
	var totalPrice: Double
}
