include $(sort $(wildcard $(BR2_EXTERNAL_GAUGE_PATH)/package/*/*.mk))
